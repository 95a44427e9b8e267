// flash_attention, mla_attention, flash_attention_batched_per_cache: one flash kernel
// (kernels/attention.cl) with the score split into two key parts and a separate value width.
#include <cstdlib>

#include "core/ops/core_params.h"
#include "plan.h"

namespace ts::ocl {
namespace {

// Strides (elements) of a key or value tensor viewed as [batch, heads, rows, cols].
struct Strides {
  int64_t batch, head, row;
};

struct Attention {
  std::string q, k1, k2, v, out, kv_lens;  // kv_lens empty: the kv_len below
  int64_t kv_len_item = -1, q_off = 0, out_off = 0;
  int64_t batch, nh, nkv, q_len, kv_len, pos_offset;
  bool causal;
  int64_t window;
  float scale;
  int64_t dk1, dk2, dv;
  Strides s1, s2, sv;
};

// The widest vector (16, 8, 4, 2, 1) that divides every row length.
int vector_width(int64_t dk1, int64_t dk2, int64_t dv, int widest) {
  int vw = widest;
  while (vw > 1 && (dk1 % vw || dk2 % vw || dv % vw)) vw /= 2;
  return vw;
}

// Keys per piece when each (batch, kv head, row block) is split over several work-groups; 0: no split.
// Split only when the blocks alone leave the device short of work-groups (decode, few rows).
int64_t split_piece(const DeviceLimits& lim, int64_t groups, int64_t kv_len) {
  if (const char* env = std::getenv("TOUCHSTONE_OPENCL_ATTN_PIECE")) {  // tests and tuning; 0 never splits
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    check(*env && !*end && n >= 0, "TOUCHSTONE_OPENCL_ATTN_PIECE={}: want a key count (0: no split)", env);
    return n > 0 && n < kv_len ? n : 0;
  }
  // A GPU wants several work-groups resident per compute unit to hide memory latency; PoCL runs one
  // work-group per core thread at a time, so two per core even out ragged pieces.
  const int64_t target = int64_t(lim.compute_units) * (lim.cpu ? 2 : 4);
  if (groups >= target) return 0;
  // Smallest piece (and its rounding): two 64-key tiles on a GPU; on a CPU 32 keys, still more work
  // than the block's partial state they write, and small enough that short ci cases take this path.
  const int64_t quantum = lim.cpu ? 32 : 128;
  const int64_t want = int64_t(ceil_div(target, groups));
  const int64_t piece = int64_t(ceil_div(int64_t(ceil_div(kv_len, want)), quantum)) * quantum;
  return piece < kv_len ? piece : 0;
}

void flash(Planner& pl, const Attention& a) {
  // CPU drivers: one work-item per group, 32 vector accumulators; GPUs: 128 work-items, 8 each.
  const bool cpu = pl.limits().cpu;
  const size_t L = cpu ? 1 : std::min<size_t>(128, pl.reduction_group(1 << 30, 128));
  const int max_owned = cpu ? 32 : 8, vw = vector_width(a.dk1, a.dk2, a.dv, cpu ? 16 : 4);
  const int64_t dk = a.dk1 + a.dk2, rows = (a.nh / a.nkv) * a.q_len, chunks = a.dv / vw;
  check(chunks <= int64_t(max_owned * L), "OpenCL flash attention: value width {} exceeds {}", a.dv,
        max_owned * L * vw);
  // A block of query rows as large as the work-items' registers allow (at most 16).
  const int64_t bq = std::max<int64_t>(1, std::min<int64_t>({16, rows, int64_t(max_owned * L) / chunks}));
  auto local_floats = [&](int64_t bk) { return bq * dk + bk * dk + bk * a.dv + bq * bk + 5 * bq; };
  int64_t bk = cpu ? 256 : 64;
  while (bk > 1 && size_t(local_floats(bk)) * sizeof(float) > pl.limits().local_mem) bk /= 2;
  check(size_t(local_floats(bk)) * sizeof(float) <= pl.limits().local_mem,
        "OpenCL flash attention: head dims {} / {} need more local memory than the device has", dk, a.dv);
  const size_t nblk = ceil_div(rows, bq);
  const cl_mem kv_lens = pl.buf(a.kv_lens.empty() ? a.q : a.kv_lens);
  // Split: pieces in dimension 0, their states in two scratch buffers, then one combine dispatch.
  const int64_t piece = split_piece(pl.limits(), a.batch * a.nkv * int64_t(nblk), a.kv_len);
  const int64_t np = piece ? int64_t(ceil_div(a.kv_len, piece)) : 1, out_rows = a.batch * a.nh * a.q_len;
  const std::string defines = fmt::format("-DMAXO={} -DVW={}", max_owned, vw);
  cl_mem part_acc = pl.buf(a.out), part_ml = part_acc;  // unused without a split
  if (piece) {
    part_acc = pl.scratch(size_t(out_rows * np * a.dv) * sizeof(float));
    part_ml = pl.scratch(size_t(out_rows * np * 2) * sizeof(float));
  }
  pl.dispatch(pl.kernel("attention.cl", "flash_attn", defines),
              {L * size_t(np), size_t(a.nkv) * nblk, size_t(a.batch)}, {L, 1, 1}, pl.buf(a.q), pl.buf(a.k1),
              pl.buf(a.k2), pl.buf(a.v), pl.buf(a.out), kv_lens, a.kv_len_item, a.q_off, a.out_off, a.nh, a.nkv,
              a.q_len, a.kv_len, a.pos_offset, int64_t{a.causal}, a.window, a.scale, a.dk1, a.dk2, a.dv, a.s1.batch, a.s1.head, a.s1.row,
              a.s2.batch, a.s2.head, a.s2.row, a.sv.batch, a.sv.head, a.sv.row, bq, bk, piece, part_acc, part_ml,
              LocalBytes{size_t(bq * dk) * 4}, LocalBytes{size_t(bk * dk) * 4}, LocalBytes{size_t(bk * a.dv) * 4},
              LocalBytes{size_t(bq * bk) * 4}, LocalBytes{size_t(3 * bq) * 4}, LocalBytes{size_t(2 * bq) * 4});
  if (piece)
    pl.dispatch(pl.kernel("attention.cl", "flash_combine", defines), {size_t(out_rows * (a.dv / vw))},
                {pl.reduction_group(out_rows * (a.dv / vw), 64)}, part_acc, part_ml, pl.buf(a.out), a.out_off, out_rows,
                np, a.dv);
}

}  // namespace

void add_attention_ops(PlanTable& t) {
  add_plan(t, ops::flash_attention, [](Planner& pl) {
    const auto& p = pl.params<FlashAttentionParams>();
    const int64_t hd = p.head_dim, S = p.kv_rows();
    const Strides kv{p.num_kv_heads * S * hd, S * hd, hd};
    flash(pl, {.q = "q", .k1 = "k", .k2 = "k", .v = "v", .out = "out", .kv_lens = "", .batch = p.batch,
               .nh = p.num_heads, .nkv = p.num_kv_heads, .q_len = p.q_len, .kv_len = p.kv_len,
               .pos_offset = p.pos_offset, .causal = p.causal, .window = p.sliding_window, .scale = p.scale,
               .dk1 = hd, .dk2 = 0, .dv = hd, .s1 = kv, .s2 = kv, .sv = kv});
  });
  add_plan(t, ops::mla_attention, [](Planner& pl) {
    const auto& p = pl.params<MlaAttentionParams>();
    const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
    // One latent "kv head" shared by every query head: K = [compressed | rope], V = compressed.
    const Strides c{p.kv_len * r, 0, r}, kr{p.kv_len * dr, 0, dr};
    flash(pl, {.q = "q", .k1 = "kv_compressed", .k2 = "kv_rope", .v = "kv_compressed", .out = "out", .kv_lens = "",
               .batch = p.batch, .nh = p.num_heads, .nkv = 1, .q_len = p.q_len, .kv_len = p.kv_len,
               .pos_offset = p.pos_offset, .causal = p.causal, .window = 0, .scale = p.scale, .dk1 = r, .dk2 = dr,
               .dv = r, .s1 = c, .s2 = kr, .sv = c});
  });
  add_plan(t, ops::flash_attention_batched_per_cache, [](Planner& pl) {
    const auto& p = pl.params<FlashAttentionBatchedPerCacheParams>();
    const int64_t m = pl.tensor("q").shape().at(0);
    const Strides cache{0, p.capacity * p.hd, p.hd};
    // One dispatch per sequence: each has its own cache buffers and reads its length on the device.
    for (int64_t i = 0; i < m; ++i) {
      const std::string k = fmt::format("k_caches.{}", i), v = fmt::format("v_caches.{}", i);
      flash(pl, {.q = "q", .k1 = k, .k2 = k, .v = v, .out = "out", .kv_lens = "kv_lens", .kv_len_item = i,
                 .q_off = i * p.nq * p.hd, .out_off = i * p.nq * p.hd, .batch = 1, .nh = p.nq, .nkv = p.nkv,
                 .q_len = 1, .kv_len = p.capacity, .pos_offset = 0, .causal = false, .window = 0, .scale = p.scale,
                 .dk1 = p.hd, .dk2 = 0, .dv = p.hd, .s1 = cache, .s2 = cache, .sv = cache});
    }
  });
}

}  // namespace ts::ocl
