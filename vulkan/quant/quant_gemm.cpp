// The quant family: dequantize, the GGUF GEMMs (a GEMV kernel for decode, a tiled one that decodes
// each weight slab into shared memory for prefill; the block decoding is shaders/quant.glsl), and
// the GPTQ / AWQ GEMMs. The GGUF kind is a specialization constant (its QuantKind number), so each
// kernel is one SPIR-V per dtype and the driver folds the other kinds' code away.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/ops/quant_params.h"
#include "core/quant/formats.h"
#include "core/quant/int8_route.h"
#include "vulkan/plan.h"
#include "vulkan/shaders/act_q8.glsl"
#include "vulkan/shaders/quant_gemm_push.glsl"
#include "vulkan/shaders/quant_gemv_push.glsl"

namespace ts::vk {

namespace {
constexpr int64_t kGemvMaxM = 4;      // gemv_quant.comp: MAXM
constexpr int64_t kGemvRows = 4;      // gemv_quant.comp: NR
constexpr uint32_t kGemvWg = 64;      // at most gemv_quant.comp's MAX_WG
constexpr int64_t kTile = 64;         // gemm_quant.comp: BM
constexpr uint32_t kDequantWg = 128;  // dequant.comp
constexpr uint32_t kGptqWg = 64;      // gptq.comp, prefill: columns per work group
constexpr int64_t kGptqRows = 8;      // gptq.comp: MR
// gptq.comp, decode (m <= MR): 32 columns x 8 slices of k per work group (256 invocations, the
// backend's largest work group), 128 groups for a 4096-column decode, each invocation with four
// qweight loads in flight: one invocation per column walking all of k streamed 10 GB/s on an H100.
constexpr uint32_t kGptqSplitCols = 32, kGptqSplitSlices = 8;
// gptq.comp, AWQ decode (main_awq_split): 8 word columns (64 columns) x 32 slices of k, 64 groups for
// a 4096-column decode; a slice of k = 4096 is one group of 128 k rows, a word a row. Shaped on
// lavapipe: no GPU has measured it yet.
constexpr uint32_t kAwqSplitWords = 8, kAwqSplitSlices = 32;
// gptq.comp's `red`, the row sums of a work group, in bytes: the act-order table's shared memory comes
// on top of it.
constexpr uint64_t kGptqRedBytes = 8 * 256 * 4;

// Entries of the act-order decode's staged scale / zero table (gptq.comp, ACT_STAGE): every group for
// the work group's columns, 4 bytes each, where the device's shared memory holds them beside `red`;
// 1 (the per-k walk) where it does not.
uint32_t act_stage_entries(const Target& tg, int64_t k, int64_t group_size, uint32_t cols) {
  const uint64_t entries = static_cast<uint64_t>(k / group_size) * cols;
  return kGptqRedBytes + 4 * entries <= tg.max_shared ? static_cast<uint32_t>(entries) : 1u;
}

// The shaders number the kinds as QuantKind does: both expand core/kinds.inc (shaders/kinds.glsl).
uint32_t kind_spec(QuantKind k) { return static_cast<uint32_t>(k); }

// The shaders read GGUF bytes as uint words, and a block row need not end on a word: the binding
// covers the last partial word (inside the tensor's trailing guard zone, never past the buffer).
uint64_t word_range(uint64_t bytes) { return (bytes + 3) / 4 * 4; }

// The int8 route's activations (act_q8.glsl), written once per call and read by every part's GEMV.
const char* const kActQ8 = "gemv.act_q8";

// a [1, k] to int8 codes, scales and sums in kActQ8 (quantize_q8.comp).
Dispatch plan_quantize(const Target& tg, int64_t k) {
  Dispatch d;
  d.shader = tg.variant(Kernel::quantize_q8);
  d.bindings = {"a", Binding::scratch_buffer(kActQ8, 4 * static_cast<uint64_t>(TS_Q8_WORDS(k)))};
  d.push = Push().u(k).words();
  d.groups = {static_cast<uint32_t>(TS_Q8_GROUPS(k)), 1, 1};  // one pass each: each writes its own flag
  return d;
}

// A decode row's 16-byte chunks (gemv_quant_m1.comp: chunks_per_row).
int64_t chunks_per_row(QuantKind kind, int64_t k) { return kind == QuantKind::Q8_0 ? k / 16 : k / 32; }

// Windows of GGUF rows that stay within maxStorageBufferRange once rounded up to whole words.
std::vector<std::pair<int64_t, int64_t>> gguf_windows(const Target& tg, int64_t rows, uint64_t row_bytes) {
  Target t = tg;
  t.max_range -= 4;
  return t.row_windows(rows, row_bytes);
}

// out columns [col0, col0 + n_rows) of rows ldo wide = a @ dequant(weight)^T: one dispatch per window
// of the weight's rows; GEMV for decode, the tiled kernel for prefill.
void plan_gguf(std::vector<Dispatch>& out, const Target& tg, const std::string& weight, QuantKind kind, int64_t m,
               int64_t n_rows, int64_t n_cols, int64_t ldo, int64_t col0) {
  const uint64_t row_bytes = static_cast<uint64_t>(quant::row_bytes(quant::block_format(kind), n_cols));
  for (auto [n0, nn] : gguf_windows(tg, n_rows, row_bytes)) {
    Dispatch d;
    d.bindings = {"a", Binding(weight, n0 * row_bytes, word_range(nn * row_bytes)), "out"};
    d.push = push_words(QuantGemvPushIn{.m = m, .n = nn, .k = n_cols, .ldo = ldo, .n_off = col0 + n0});
    if (m == 1) {
      // Decode: 16-byte chunks, NR rows a group (gemv_quant_m1.comp); binding 3 is the activations as
      // vec4s, binding 4 (the int8 route) their codes, which the caller's plan_quantize wrote.
      const GemvShape g = gemv_shape(tg, chunks_per_row(kind, n_cols));
      const bool int8 = gemv_int8(tg, m, n_rows);
      d.shader = tg.variant(int8 ? Kernel::gemv_quant_q8 : Kernel::gemv_quant_m1);
      d.bindings.push_back("a");
      if (int8) d.bindings.push_back(Binding::scratch_buffer(kActQ8, 4 * static_cast<uint64_t>(TS_Q8_WORDS(n_cols))));
      d.spec = {g.wg, kind_spec(kind), g.rows, g.mode, g.unroll};
      const uint32_t cap = g.groups ? std::min(g.groups, tg.group_cap) : tg.group_cap;
      d.groups = {groups_for(nn, g.rows_per_group(tg), std::min(cap, tg.max_groups[0])), 1, 1};
    } else if (m <= kGemvMaxM) {
      d.shader = tg.variant(Kernel::gemv_quant);
      d.spec = {kGemvWg, kind_spec(kind)};
      d.groups = {groups_for(nn, kGemvRows, std::min(tg.group_cap, tg.max_groups[0])), 1, 1};
    } else {
      d.shader = tg.variant(Kernel::gemm_quant);
      d.push = push_words(QuantGemmPushIn{.m = m, .n = nn, .k = n_cols, .ldo = ldo, .n_off = col0 + n0});
      d.spec = {kind_spec(kind)};
      d.groups = {ceil_div(nn, kTile), ceil_div(m, kTile), 1};
    }
    out.push_back(std::move(d));
  }
}

bool any_int8_part(const Target& tg, const GemmQuantFusedParams& p) {
  for (int i = 0; i < p.parts(); ++i)
    if (gemv_int8(tg, p.m, p.n_rows[i])) return true;
  return false;
}

// The int8 route's NMSE bound for a call that takes it: every kind's activations in blocks of 32
// (act_q8.glsl), read from the case's own row. None where it takes the F32 route, or where an
// activation is not finite (the whole product then runs the F32 route, and the op's tolerance holds).
std::optional<Tolerance> int8_route_tolerance(const Problem& pr, const TensorMap& in, int64_t m, int64_t k, bool int8) {
  if (!int8) return std::nullopt;
  const auto ratio = activation_peak_ratio(in.at("a"), dense_rows(m, k), k, 32);
  if (!ratio) return std::nullopt;
  return int8_tolerance(*ratio, "32", pr.dtype);
}

// GPTQ and AWQ share gptq.comp; bindings 5 and 7 (g_idx, and g_idx again read as uvec4s) are bound
// to qzeros when there is no act-order, binding 6 is the activations again (read as vec4s by the F32
// variant).
Dispatch plan_packed(const Target& tg, bool awq, int64_t bits, bool act_order, int64_t m, int64_t n, int64_t k,
                     int64_t group_size) {
  Dispatch d;
  d.shader = tg.variant(Kernel::gemm_gptq);
  const char* g_idx = act_order ? "g_idx" : "qzeros";
  d.bindings = {"a", "qweight", "qzeros", "scales", "out", g_idx, "a", g_idx};
  d.push = Push().u(m).u(n).u(k).u(group_size).words();
  const bool decode = m <= kGptqRows;  // decode: k split across the work group's rows of invocations
  if (decode && awq) {  // x: word columns, eight columns each
    d.spec = {kAwqSplitWords, 1u, static_cast<uint32_t>(bits), 0u, kAwqSplitSlices};
    d.groups = {ceil_div(n, 8 * kAwqSplitWords), 1, 1};
    return d;
  }
  const uint32_t cols = decode ? kGptqSplitCols : kGptqWg;
  const uint32_t stage = decode && act_order ? act_stage_entries(tg, k, group_size, cols) : 1u;
  d.spec = {cols, awq ? 1u : 0u, static_cast<uint32_t>(bits), act_order ? 1u : 0u, decode ? kGptqSplitSlices : 1u, stage};
  d.groups = {ceil_div(n, cols), decode ? 1u : groups_for(m, kGptqRows, tg.max_groups[1]), 1};
  return d;
}
}  // namespace

void add_quant_planners(PlannerTable& t) {
  add_planner(t, ops::dequantize, [](const QuantRowsParams& p, const Decls&, const Target& tg) {
    const uint64_t row_bytes = static_cast<uint64_t>(quant::row_bytes(quant::block_format(p.kind), p.n_cols));
    const uint64_t out_row = static_cast<uint64_t>(p.n_cols) * 4;
    std::vector<Dispatch> out;
    // Windows of whole output rows (F32 rows are the larger); the bytes' window starts at the
    // aligned offset at or before its first row and the shader skips the bytes in between.
    for (auto [r0, nr] : tg.row_windows(p.n_rows, out_row)) {
      const uint64_t first = r0 * row_bytes, start = first / tg.offset_align * tg.offset_align;
      Dispatch d;
      d.shader = tg.variant(Kernel::dequant);
      d.bindings = {Binding("bytes", start, word_range(first - start + nr * row_bytes)),
                    Binding("out", r0 * out_row, nr * out_row)};
      d.push = Push().u(nr).u(p.n_cols).u(first - start).words();
      d.spec = {kDequantWg, kind_spec(p.kind)};
      d.groups = {groups_for(nr * (p.n_cols / 16), kDequantWg, std::min(tg.group_cap, tg.max_groups[0])), 1, 1};
      out.push_back(std::move(d));
    }
    return out;
  });
  add_planner(
      t, ops::gemm_quant,
      [](const GemmQuantParams& p, const Decls&, const Target& tg) {
        std::vector<Dispatch> out;
        if (gemv_int8(tg, p.m, p.n_rows)) out.push_back(plan_quantize(tg, p.n_cols));
        plan_gguf(out, tg, "weight", p.kind, p.m, p.n_rows, p.n_cols, p.n_rows, 0);
        return out;
      },
      {},
      [](const Problem& pr, const Target& tg, const TensorMap& in) {
        const auto& p = pr.params.as<GemmQuantParams>();
        return int8_route_tolerance(pr, in, p.m, p.n_cols, gemv_int8(tg, p.m, p.n_rows));
      });
  add_planner(
      t, ops::gemm_quant_fused,
      [](const GemmQuantFusedParams& p, const Decls&, const Target& tg) {
        // One dispatch per part (each its own kind) into its own column range of the shared output,
        // after one quantization of the activations where any part takes the int8 route.
        std::vector<Dispatch> out;
        if (any_int8_part(tg, p)) out.push_back(plan_quantize(tg, p.n_cols));
        int64_t col = 0;
        for (int i = 0; i < p.parts(); ++i) {
          plan_gguf(out, tg, "weight." + std::to_string(i), p.kind[i], p.m, p.n_rows[i], p.n_cols, p.total_rows(),
                    col);
          col += p.n_rows[i];
        }
        return out;
      },
      {},
      [](const Problem& pr, const Target& tg, const TensorMap& in) {
        const auto& p = pr.params.as<GemmQuantFusedParams>();
        return int8_route_tolerance(pr, in, p.m, p.n_cols, any_int8_part(tg, p));
      });
  add_planner(t, ops::gemm_gptq, [](const GptqParams& p, const Decls&, const Target& tg) {
    return std::vector{plan_packed(tg, false, p.bits, p.desc_act, p.m, p.n, p.k, p.group_size)};
  });
  add_planner(t, ops::gemm_awq, [](const AwqParams& p, const Decls&, const Target& tg) {
    return std::vector{plan_packed(tg, true, p.bits, false, p.m, p.n, p.k, p.group_size)};
  });
}

// The int8 route is not the default: on an NVIDIA H200 (2026-11-27, docs/figures/gpu-2026-11-27-h200-*)
// it took 1.05-1.39x the F32 route's time (three alternating rounds, Q4_0 / Q8_0 / Q4_K / Q6_K at
// k = 14336): the decode GEMV there is bound neither by its integer issue nor by its bytes, and the
// quantizing dispatch before it costs more than its dot products save.
bool gemv_int8(const Target& tg, int64_t m, int64_t outputs) {
  static const bool int8 = [] {
    const char* env = std::getenv("TOUCHSTONE_VULKAN_GEMV_ROUTE");
    if (!env || !*env || std::string_view(env) == "f32") return false;
    check(std::string_view(env) == "int8", "TOUCHSTONE_VULKAN_GEMV_ROUTE={}: want f32 (the default) or int8", env);
    return true;
  }();
  return int8 && tg.int_dot && m == 1 && outputs >= kMinInt8Outputs;
}

// The decode GEMV's shape (gemv_quant_m1.comp) for rows of `chunks` 16-byte chunks. A GPU gets 8
// subgroups a group (256 invocations at a subgroup size of 32) sharing 4 rows (mode 0): a 4096-row
// decode launches 1024 groups, about one full wave on a GPU of 132 compute units. Where a row has
// fewer chunks than the group has invocations (a short k: 128 chunks of Q4_K at k = 4096), each
// subgroup takes 2 rows of its own instead (mode 1), its lanes loading 4 chunks at once, so that no
// invocation idles (on an H200, 2026-11-27, F32 route, in two calls of one lease: Q4_K n14336 k4096
// 29.4 us against 35.3; at k = 14336 the two modes were within 10% of each other). A CPU driver runs a group on one core one
// invocation after another: 64 invocations sharing 4 rows keep its loops long and its groups few.
GemvShape gemv_shape(const Target& tg, int64_t chunks) {
  GemvShape g;
  g.rows = 4;
  g.wg = tg.cpu ? 64u : std::clamp<uint32_t>(8 * tg.subgroup_size, 64u, 256u);
  if (!tg.cpu && tg.subgroups && chunks < g.wg)
    g = {.wg = std::clamp<uint32_t>(4 * tg.subgroup_size, 32u, 256u), .rows = 2, .mode = 1, .unroll = 4};
  // Tuning knob: TOUCHSTONE_VULKAN_GEMV=wg,rows[,groups[,mode[,unroll]]] (the shader's MAX_WG 256 and
  // MAX_NR 8 bound them; mode 1 needs subgroup arithmetic).
  if (const char* env = std::getenv("TOUCHSTONE_VULKAN_GEMV")) {
    unsigned wg = 0, rows = 0, groups = 0, mode = 0, unroll = 1;
    const int got = std::sscanf(env, "%u,%u,%u,%u,%u", &wg, &rows, &groups, &mode, &unroll);
    check(got >= 2 && wg >= tg.subgroup_size && wg <= 256 && (wg & (wg - 1)) == 0 && rows >= 1 && rows <= 8 &&
              mode <= 1 && (mode == 0 || tg.subgroups) && unroll >= 1 && unroll <= 4,
          "TOUCHSTONE_VULKAN_GEMV={}: want wg,rows[,groups[,mode[,unroll]]] with wg a power of two from the subgroup "
          "size to 256, rows 1 to 8, mode 0 or 1 (1 needs subgroup arithmetic) and unroll 1 to 4",
          env);
    g = {wg, rows, groups, mode, unroll};
  }
  return g;
}

}  // namespace ts::vk
