// The quant family: GGUF rows (dequantize, gemm_quant, gemm_quant_fused) decoded by kernels/quant.h in
// every kernel, and the GPTQ / AWQ GEMMs (kernels/gptq.cl).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "core/ops/op_refs.h"
#include "core/quant/formats.h"
#include "opencl/dense/gemm_tile.h"
#include "opencl/kernels/quant_gemv_args.h"
#include "opencl/quant/quant_kernels.h"

namespace ts::ocl {

std::string kind_defines(QuantKind kind, size_t plain_bytes) {
  if (!quant::format(kind)) return fmt::format("-DQPLAIN -DDQ32=dq32_plain -DQBE=32 -DQBB={}", 32 * plain_bytes);
  const quant::Format& f = quant::block_format(kind);
  std::string fn(enum_name(kind));
  std::transform(fn.begin(), fn.end(), fn.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return fmt::format("-DDQ32=dq32_{} -DQBE={} -DQBB={}", fn, f.block_elems, f.block_bytes);
}

// R x m 16-wide partial sums per work-item. CPU drivers: one row per work-item streaming its bytes (more
// rows spill the sums; measured on PoCL). GPUs: two rows at m = 1 (the activation chunk is reused), one
// above, keeping the sums within the register file (not measured on a GPU yet).
GemvShape gemv_shape(const Planner& pl, QuantKind kind, int64_t m, int64_t n_cols) {
  const bool cpu = pl.limits().cpu;
  const quant::Format* f = quant::format(kind);
  return {!cpu && m == 1 ? 2 : 1, cpu ? 1 : static_cast<int>(pl.reduction_group(n_cols / 32, 64)),
          cpu && f ? f->block_elems / 32 : 1};
}

GemmTile quant_gemm_tile(const Planner& pl, int64_t n_cols) {
  GemmTile t = gemm_tile(pl.limits());
  // The slab is decoded 32 values at a time and never straddles the row's end.
  if (t.tk % 32 != 0 || n_cols % t.tk != 0) t.tk = 32;
  check(static_cast<size_t>(t.tk) * (t.tm + t.tn + 4) * 4 <= pl.limits().local_mem,
        "OpenCL quant GEMM: a 32-deep slab of a {}x{} tile exceeds the device's local memory", t.tm, t.tn);
  return t;
}

std::string GemvShape::defines() const { return fmt::format("-DR={} -DWG={} -DU={}", r, wg, u); }

namespace {

// The GPU decode GEMV (gemv_quant_m1.cl): 256 work-items (8 warps of 32) and 4 rows a work-group, so a
// 4096-row decode is 1024 groups, about one full wave of an H100's 132 compute units, each work-item
// with four rows' words in flight (the Vulkan kernel's group shape on a 32-wide device, with word slots:
// its 16-byte chunks ran 1.24-1.29x slower under NVIDIA's OpenCL on an H200, docs/figures/gpu-2026-11-26-h200-*).
constexpr size_t kGemvM1Wg = 256;
constexpr int kGemvM1Rows = 4;

void plan_dequantize(Planner& pl) {
  const auto& p = pl.params<QuantRowsParams>();
  pl.dispatch(pl.kernel("dequantize.cl", "dequantize_rows", kind_defines(p.kind)),
              {ceil_div(p.n_cols, 32), static_cast<size_t>(p.n_rows)}, {1, 1}, pl.buf("bytes"), pl.buf("out"),
              p.n_rows, p.n_cols);
}

// out[:, ocol0 .. ocol0 + n_rows] (row stride ldo) = a[m, n_cols] @ dequant(w)^T: the GEMV kernel for
// m <= 8 (decode, bandwidth-bound on w), the tiled GEMM with the slab decoded in local memory above.
void gguf_gemm(Planner& pl, QuantKind kind, cl_mem a, cl_mem w, cl_mem out, int64_t m, int64_t n_rows,
               int64_t n_cols, int64_t ldo, int64_t ocol0) {
  const std::string kdefs = kind_defines(kind);
  if (m == 1 && !pl.limits().cpu && quant::format(kind)) {
    // GPU decode: word slots, kGemvM1Rows rows a work-group (gemv_quant_m1.cl).
    size_t wg = std::min<size_t>(kGemvM1Wg, pl.limits().max_work_group & ~size_t{63});
    int rows = kGemvM1Rows;
    // Tuning knob: TOUCHSTONE_OPENCL_GEMV=wg,rows (wg a power of two, rows 1 to 8).
    if (const char* env = std::getenv("TOUCHSTONE_OPENCL_GEMV")) {
      unsigned ew = 0, er = 0;
      check(std::sscanf(env, "%u,%u", &ew, &er) == 2 && ew >= 32 && ew <= pl.limits().max_work_group &&
                (ew & (ew - 1)) == 0 && er >= 1 && er <= 8,
            "TOUCHSTONE_OPENCL_GEMV={}: want wg,rows with wg a power of two from 32 to the device's {} and rows 1 to 8",
            env, pl.limits().max_work_group);
      wg = ew;
      rows = static_cast<int>(er);
    }
    check(wg >= 32, "OpenCL decode GEMV: the device's work-groups ({} items) are below 32", pl.limits().max_work_group);
    pl.dispatch(pl.kernel("gemv_quant_m1.cl", "gemv_quant_m1",
                          fmt::format("-DKIND={0} -DKIND_{0} -DR={1} -DWG={2}", enum_name(kind), rows, wg)),
                {ceil_div(n_rows, rows) * wg}, {wg}, a, w, out, n_rows, n_cols, ocol0);
    return;
  }
  if (m <= 8) {
    const GemvShape g = gemv_shape(pl, kind, m, n_cols);
    pl.dispatch(pl.kernel("gemv_quant.cl", "gemv_quant", fmt::format("-DGM={} {} {}", m, g.defines(), kdefs)),
                {ceil_div(n_rows, g.r) * g.wg}, {size_t(g.wg)},
                pl.args(pack(QuantGemvArgsIn{.n = n_rows, .k = n_cols, .ldo = ldo, .ocol0 = ocol0})), a, w, out);
    return;
  }
  dispatch_gemm_tiled(pl, quant_gemm_tile(pl, n_cols), "gemm_quant.cl", kdefs, a, w, out, m, n_rows, n_cols, ldo,
                      ocol0);
}

void plan_gemm_quant(Planner& pl) {
  const auto& p = pl.params<GemmQuantParams>();
  gguf_gemm(pl, p.kind, pl.buf("a"), pl.buf("weight"), pl.buf("out"), p.m, p.n_rows, p.n_cols, p.n_rows, 0);
}

// One dispatch per part (each part's kind is its own program) into its column range of out.
void plan_gemm_quant_fused(Planner& pl) {
  const auto& p = pl.params<GemmQuantFusedParams>();
  int64_t col0 = 0;
  for (int i = 0; i < p.parts(); ++i) {
    gguf_gemm(pl, p.kind[i], pl.buf("a"), pl.buf(fmt::format("weight.{}", i)), pl.buf("out"), p.m, p.n_rows[i],
              p.n_cols, p.total_rows(), col0);
    col0 += p.n_rows[i];
  }
}

// GPTQ and AWQ: for m <= 8 a work-group per block of output columns, its work-items splitting k (the
// weight streamed once); above, the tiled GEMM with the weight slab decoded into local memory.
void dispatch_packed(Planner& pl, bool awq, bool act_order, int64_t m, int64_t n, int64_t k, int64_t group_size,
                     const std::string& defines, cl_mem g_idx) {
  if (m > 8) {
    dispatch_gemm_tiled(pl, gemm_tile(pl.limits()), "gptq_gemm.cl", defines, pl.buf("a"), pl.buf("qweight"),
                        pl.buf("out"), m, n, k, n, 0, pl.buf("scales"), pl.buf("qzeros"), g_idx, group_size);
    return;
  }
  const std::string gm = fmt::format("-DGM={} {}", m, defines);
  if (pl.limits().cpu && n % 8 == 0) {
    pl.dispatch(pl.kernel("gptq.cl", "gemm_packed_cols8", gm), {ceil_div(n, 8)}, {1}, pl.buf("a"), pl.buf("qweight"),
                pl.buf("scales"), pl.buf("qzeros"), g_idx, pl.buf("out"), n, k, group_size);
    return;
  }
  if (awq && !pl.limits().cpu) {
    // GPUs, AWQ: 8 word columns (64 columns) x 32 slices of k per work-group, each qweight word
    // loaded once for its eight columns. Shaped on PoCL: no GPU has measured it yet.
    constexpr size_t kWords = 8, kSlices = 32;
    pl.dispatch(pl.kernel("gptq.cl", "gemm_awq_words", fmt::format("{} -DWC={} -DKS={}", gm, kWords, kSlices)),
                {ceil_div(n / 8, kWords) * kWords, kSlices}, {kWords, kSlices}, pl.buf("a"), pl.buf("qweight"),
                pl.buf("scales"), pl.buf("qzeros"), g_idx, pl.buf("out"), n, k, group_size);
    return;
  }
  // GPUs: 32 columns x 8 slices of k per work-group.
  const size_t wc = pl.limits().cpu ? pl.reduction_group(n, 16) : 32, ks = pl.limits().cpu ? 1 : 8;
  // Act-order: every group's scale and zero for the work-group's columns in local memory (two floats
  // each) beside the row sums, where they fit; else the per-k walk, which TOUCHSTONE_OPENCL_GPTQ_STAGE=0
  // forces (tests: the walk a device with less local memory takes).
  const size_t groups = static_cast<size_t>(k / group_size);
  bool stage = act_order && (groups * wc * 2 + static_cast<size_t>(m) * ks * wc) * 4 <= pl.limits().local_mem;
  if (const char* env = std::getenv("TOUCHSTONE_OPENCL_GPTQ_STAGE")) {
    check(std::string(env) == "0" || std::string(env) == "1", "TOUCHSTONE_OPENCL_GPTQ_STAGE={}: want 0 or 1", env);
    stage = stage && std::string(env) == "1";
  }
  const std::string act = stage ? fmt::format(" -DACT_GROUPS={}", groups) : "";
  pl.dispatch(pl.kernel("gptq.cl", "gemm_packed", fmt::format("{} -DWC={} -DKS={}{}", gm, wc, ks, act)),
              {static_cast<size_t>(n), ks}, {wc, ks}, pl.buf("a"), pl.buf("qweight"), pl.buf("scales"),
              pl.buf("qzeros"), g_idx, pl.buf("out"), n, k, group_size);
}

void plan_gemm_gptq(Planner& pl) {
  const auto& p = pl.params<GptqParams>();
  // Without act-order the kernel never reads g_idx: any buffer stands in.
  dispatch_packed(pl, false, p.desc_act, p.m, p.n, p.k, p.group_size,
                  fmt::format("-DBITS={}{}", p.bits, p.desc_act ? " -DACT" : ""),
                  pl.buf(p.desc_act ? "g_idx" : "qzeros"));
}

void plan_gemm_awq(Planner& pl) {
  const auto& p = pl.params<AwqParams>();
  dispatch_packed(pl, true, false, p.m, p.n, p.k, p.group_size, "-DBITS=4 -DAWQ", pl.buf("qzeros"));
}

}  // namespace

void add_quant_ops(PlanTable& t) {
  add_plan(t, ops::dequantize, plan_dequantize);
  add_plan(t, ops::gemm_quant, plan_gemm_quant);
  add_plan(t, ops::gemm_quant_fused, plan_gemm_quant_fused);
  add_plan(t, ops::gemm_gptq, plan_gemm_gptq);
  add_plan(t, ops::gemm_awq, plan_gemm_awq);
}

}  // namespace ts::ocl
