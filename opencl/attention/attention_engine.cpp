// The planner side of the attention engine: work-group shape, tiles, the key split, the kernel's
// variant (affine or paged K/V, the pool dtype, scales, lse) and its arguments.
#include "opencl/attention/attention_engine.h"

#include "opencl/kernels/attention_args.h"

#include "core/unsupported.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace ts::ocl {
namespace {

// The widest vector (16, 8, 4, 2, 1) that divides every row length.
int vector_width(int64_t dk1, int64_t dk2, int64_t dv, int widest) {
  int vw = widest;
  while (vw > 1 && (dk1 % vw || dk2 % vw || dv % vw)) vw /= 2;
  return vw;
}

// Keys per piece when each (item, kv head, row block) is split over several work-groups; 0: no split.
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

// Work-items per group, output chunks each owns, vector width, and the row block's upper bound.
// CPU drivers: one work-item per group, 512 floats of accumulators (32 vectors of 16); GPUs: 128
// work-items, 8 vectors each.
struct GroupShape {
  size_t L;
  int max_owned, vw;
  int64_t bq_cap;
};
GroupShape group_shape(const Planner& pl, int64_t dk1, int64_t dk2, int64_t dv) {
  const bool cpu = pl.limits().cpu;
  GroupShape g{cpu ? 1 : std::min<size_t>(128, pl.reduction_group(1 << 30, 128)), 0, 0, 0};
  g.vw = vector_width(dk1, dk2, dv, cpu ? 16 : 4);
  g.max_owned = cpu ? 512 / g.vw : 8;
  const int64_t chunks = dv / g.vw;
  check(chunks <= int64_t(g.max_owned * g.L), "OpenCL flash attention: value width {} exceeds {}", dv,
        g.max_owned * g.L * g.vw);
  g.bq_cap = std::max<int64_t>(1, std::min<int64_t>(16, int64_t(g.max_owned * g.L) / chunks));
  return g;
}

// The grid an item view launches, from the parameters alone: the most items any step's lengths can
// make, the most positions one holds, the most keys a sequence sees.
struct ItemGrid {
  int64_t items, positions, keys;
};
ItemGrid item_grid(const Items& it) {
  switch (it.mode) {
    case SeqMode::LENS: return {it.seqs * int64_t(ceil_div(it.q_len, it.run)), std::min(it.run, it.q_len), it.capacity};
    case SeqMode::VARLEN:
    case SeqMode::FA2:
      // sum over sequences of ceil(n_s / run) <= (total_q + seqs (run - 1)) / run, and an item holds a
      // row at least: a decode-shaped batch (a row per sequence) launches one item per sequence, a
      // prefill batch at most one more than its rows fill (never a grid of the longest sequence's
      // items per sequence).
      return {std::min(it.total_q, (it.total_q + it.seqs * (it.run - 1)) / it.run), std::min(it.run, it.total_q),
              it.capacity};
    case SeqMode::TILES: return {it.seqs, std::min(it.run, it.total_q), it.capacity};
    case SeqMode::UNIFORM: break;
  }
  fail("OpenCL attention: an item view needs per-sequence lengths");
}

}  // namespace

int64_t item_positions(const Planner& pl, int64_t group, int64_t dv) {
  return std::max<int64_t>(1, group_shape(pl, dv, 0, dv).bq_cap / group);
}

void flash(Planner& pl, const Attention& a) {
  const Paging* pg = a.paging;
  const GroupShape g = group_shape(pl, a.dk1, a.dk2, a.dv);
  const size_t L = g.L;
  const int vw = g.vw;
  const int64_t dk = a.dk1 + a.dk2, group = a.nh / a.nkv;
  // Items: the most positions one holds set the row blocks per (item, kv head); the most keys a
  // sequence may have the pieces (a piece past a shorter sequence's keys loads nothing).
  int64_t q_len = a.q_len, kv_len = a.kv_len, n_items = a.batch;
  if (a.items) {
    const ItemGrid g = item_grid(*a.items);
    q_len = g.positions, kv_len = g.keys, n_items = g.items;
  }
  if (n_items == 0 || q_len == 0) return;  // no query row: nothing to write
  const int64_t rows = group * q_len;
  // A block of query rows as large as the work-items' registers allow (at most 16).
  const int64_t bq = std::min(g.bq_cap, rows);
  auto local_floats = [&](int64_t bk) { return TS_ATTN_LOCAL_FLOATS(bq, bk, dk, a.dv); };
  int64_t bk = pl.limits().cpu ? 256 : 64;
  while (bk > 1 && size_t(local_floats(bk)) * sizeof(float) > pl.limits().local_mem) bk /= 2;
  check(size_t(local_floats(bk)) * sizeof(float) <= pl.limits().local_mem,
        "OpenCL flash attention: head dims {} / {} need more local memory than the device has", dk, a.dv);
  const size_t nblk = ceil_div(rows, bq);
  const cl_mem dummy = pl.buf(a.q);  // bound where the variant reads nothing
  const cl_mem kv_lens = a.kv_lens.empty() ? dummy : pl.buf(a.kv_lens);
  // Split: pieces in dimension 0, their states in one scratch buffer, then one combine dispatch.
  const int64_t piece = a.piece >= 0 ? (a.piece < kv_len ? a.piece : 0)
                                     : split_piece(pl.limits(), n_items * a.nkv * int64_t(nblk), kv_len);
  const int64_t np = piece ? int64_t(ceil_div(kv_len, piece)) : 1;
  const int64_t out_rows = a.items ? a.items->out_rows : a.batch * a.nh * a.q_len;
  std::string defines = fmt::format("-DMAXO={} -DVW={}", g.max_owned, vw);
  if (pg) {
    // vLLM's key chunks load as groups of min(VW, x) (x a power of two, as VW).
    defines += pg->vllm ? fmt::format(" -DPAGED=2 -DKXW={}", std::min<int64_t>(vw, pg->x)) : " -DPAGED=1";
    if (pg->any_dtype) defines += " -DKV_ANY -DSCALED";
    // The kernel's pool offsets are 32-bit.
    supported_only_if(pg->num_blocks * std::max(pg->k_block, pg->v_block) <= std::numeric_limits<int32_t>::max(),
          "OpenCL paged attention: a pool of {} blocks of {} elements exceeds 32-bit offsets", pg->num_blocks,
          std::max(pg->k_block, pg->v_block));
  }
  if (!a.lse.empty()) defines += " -DLSE";
  // Without a split the states' buffer is never read or written: bound to the output.
  cl_mem part = pl.buf(a.out);
  const int64_t ml_off = out_rows * np * a.dv;  // the (m, l) pairs follow the accumulators
  if (piece) part = pl.scratch(size_t(out_rows * np * (a.dv + 2)) * sizeof(float));
  const Items* it = a.items;
  const cl_mem lens = it ? pl.buf(it->lens) : kv_lens;
  const cl_mem second = it && !it->second.empty() ? pl.buf(it->second) : dummy;
  const cl_mem tile_seqs = it && !it->tile_seqs.empty() ? pl.buf(it->tile_seqs) : dummy;
  const cl_mem tile_starts = it && !it->tile_starts.empty() ? pl.buf(it->tile_starts) : dummy;
  const cl_mem tables = pg ? pl.buf(pg->tables) : dummy;
  const cl_mem k_scales = pg && !pg->k_scales.empty() ? pl.buf(pg->k_scales) : dummy;
  const cl_mem v_scales = pg && !pg->v_scales.empty() ? pl.buf(pg->v_scales) : dummy;
  const cl_mem lse = a.lse.empty() ? dummy : pl.buf(a.lse);
  const int64_t lse_rows = out_rows / a.nh, bs = pg ? pg->block_size : 1;
  AttnArgsIn args;
  args.kv_len_item = a.kv_len_item, args.q_off = a.q_off, args.out_off = a.out_off, args.nh = a.nh, args.nkv = a.nkv;
  // The kernel's q_len: a batch entry's positions, or Lens' per sequence (it cuts them into runs).
  args.q_len = it && it->mode == SeqMode::LENS ? it->q_len : q_len;
  args.kv_len = kv_len, args.pos_offset = a.pos_offset, args.causal = a.causal, args.window = a.window, args.scale = a.scale;
  args.dk1 = a.dk1, args.dk2 = a.dk2, args.dv = a.dv;
  args.k1_bs = a.s1.batch, args.k1_hs = a.s1.head, args.k1_rs = a.s1.row;
  args.k2_bs = a.s2.batch, args.k2_hs = a.s2.head, args.k2_rs = a.s2.row;
  args.v_bs = a.sv.batch, args.v_hs = a.sv.head, args.v_rs = a.sv.row;
  args.bq = bq, args.bk = bk, args.piece = piece, args.ml_off = ml_off;
  args.seq_mode = it ? int(it->mode) : 0, args.nseq = it ? it->seqs : 0, args.run = it ? it->run : q_len;
  args.seq_rows = it ? it->seq_rows : 0;
  args.head_rows = it ? it->head_rows : a.head_rows ? a.head_rows : a.q_len;
  args.pos_rows = it ? it->pos_rows : a.pos_rows ? a.pos_rows : 1;
  if (pg) {
    args.table_width = pg->table_width, args.block_size = bs, args.kb_stride = pg->k_block, args.vb_stride = pg->v_block;
    args.kx = pg->x, args.sb_stride = a.nkv * bs, args.s_hs = bs;
    args.kv_kind = static_cast<int64_t>(pg->kv_dtype);
  } else {
    args.block_size = 1;
  }
  args.lse_rows = lse_rows;
  pl.dispatch(pl.kernel("attention.cl", "flash_attn", defines),
              {L * size_t(np), size_t(a.nkv) * nblk, size_t(n_items)}, {L, 1, 1}, pl.args(pack(args)), pl.buf(a.q),
              pl.buf(a.k1), pl.buf(a.k2), pl.buf(a.v), pl.buf(a.out), lens, part, second, tile_seqs, tile_starts,
              tables, k_scales, v_scales, lse, LocalBytes{size_t(local_floats(bk)) * sizeof(float)});
  if (piece)
    pl.dispatch(pl.kernel("attention.cl", "flash_combine", defines), {size_t(out_rows * (a.dv / vw))},
                {pl.reduction_group(out_rows * (a.dv / vw), 64)}, part, ml_off, pl.buf(a.out), a.out_off, out_rows,
                np, a.dv, lse, a.nh, lse_rows);
}

}  // namespace ts::ocl
