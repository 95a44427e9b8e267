// The dense attention ops (TS_DENSE_ATTENTION_VIEW_OPS, core/ops/core/attention_view.h) on the cpu
// attention engine, each through its view, and the engine's driver (AttentionRun): blocks of query rows, each over a K/V view, go to the
// kernels of cpu/attention/attention_kernels.h. Work is split over (sequence, kv head, query block) and, for
// short query blocks (decode), over fixed key ranges too; the partial softmax states of a block are
// then merged in key order, so results do not depend on thread timing.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/ops/core/attention_view.h"
#include "core/ops/view_of.h"
#include "cpu/attention/attention_kernels.h"
#include "cpu/attention/attention_run.h"
#include "cpu/attention/int8_scores.h"
#include "cpu/kernels.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {

namespace {
// Key range per task when a block has few query rows (decode). Each task starts cold (its first
// rows are waited for, not prefetched during earlier work), so fewer, longer tasks wait less; 1024
// still leaves 32 tasks for one sequence of 8 kv heads at 4096 keys. Against 512 (Zen 4, 2026-11-25,
// ci/bench-ab.py, 16 alternating rounds each): paged decode b8 ctx4096 F16 0.951x the time (faster in
// 14 of 16 rounds), kv_paged ctx4096 F16 0.83x and 0.95x (13 and 11 of 16), I8 0.94x (12 of 16);
// flash decode unchanged (1.01x, 1.03x).
constexpr int64_t kSplitKeys = 1024;
constexpr int64_t kSplitMaxRows = 16;   // blocks up to this many rows are split over keys
// Fewer blocks than this (MLA decode: all heads share the latent cache, one block per sequence)
// and long blocks are cut over keys too, into pieces of at least kSplitLongKeys: one block would
// leave every core but one idle. Each piece of a long block carries the state of all its rows
// (128 x 514 floats for DeepSeek's MLA), so its pieces stay larger than a decode block's. A fixed
// count, not the core count, so the cut (and so the rounding) is the same on every machine.
constexpr int64_t kMinTasks = 16;
constexpr int64_t kSplitLongKeys = 1024;
// Merges of fewer partial-state floats than this run on the calling thread (see AttentionRun::run).
constexpr size_t kSerialMergeFloats = size_t{1} << 16;
// A task's partial state starts on a cache line of its own and fills whole lines: the tasks running
// at once on the other cores are its neighbours in the buffer, and each writes its running max and sum
// and its accumulators every tile. Packed end to end (4 rows x 130 floats), one task's last
// accumulators and the next one's (m, l) shared a line, which went from core to core twice a tile,
// and the accumulator rows straddled lines.
constexpr size_t kLineFloats = 64 / sizeof(float);
constexpr size_t whole_lines(size_t floats) { return (floats + kLineFloats - 1) / kLineFloats * kLineFloats; }

// The K/V view of (sequence b, kv head kh) over the tensors `k1`, `k2`, `v` of sequence b: the dense
// view's rows where they lie. MLA's values are its latent keys (v null: the k1 segment).
KvView kv_view(const attn::DenseView& v, int64_t b, int64_t kh, const Tensor& k1, const Tensor* k2, const Tensor& vt) {
  const size_t es = dtype_size(k1.dtype());
  return {k1.data() + v.k1.start(b, kh) * es, v.k1.row, k2 ? k2->data() + v.k2.start(b, kh) * es : nullptr,
          v.k2.row, v.values_are_keys() ? nullptr : vt.data() + v.v.start(b, kh) * es, v.v.row, v.dk1, v.dk2, v.dv};
}

// Every op of TS_DENSE_ATTENTION_VIEW_OPS through its view (core/ops/core/attention_view.h), made at
// prepare: per (sequence, kv head), blocks of as many positions as fill kRowsPerBlock rows with the
// GQA group (a block shares each K/V load among its rows; MLA's group is every head), each query row
// over its visible keys. The per-sequence tensors' names are made here, so an execute builds no string.
HostRun attention(attn::DenseView v, TensorMap& t) {
  std::vector<std::string> k1(size_t(v.seqs)), k2(size_t(v.seqs)), vt(size_t(v.seqs));
  for (int64_t b = 0; b < v.seqs; ++b) {
    k1[b] = v.k1.name(b), vt[b] = v.v.name(b);
    if (v.dk2) k2[b] = v.k2.name(b);
  }
  return [v = std::move(v), &t, k1 = std::move(k1), k2 = std::move(k2), vt = std::move(vt)] {
    Tensor& out = tensor(t, v.out);
    const size_t es = dtype_size(out.dtype());
    const auto q = widen_all(tensor(t, v.q));
    const int64_t group = v.group(), dqk = v.dqk(), positions = std::max<int64_t>(1, kRowsPerBlock / group);
    AttentionRun run(tensor(t, k1[0]).dtype(), out.dtype(), float(v.scale));
    for (int64_t b = 0; b < v.seqs; ++b) {
      const int64_t kv = v.keys(t, b);
      const Tensor* k2b = v.dk2 ? &tensor(t, k2[b]) : nullptr;
      for (int64_t kh = 0; kh < v.kv_heads; ++kh) {
        const KvView kvv = kv_view(v, b, kh, tensor(t, k1[b]), k2b, tensor(t, vt[b]));
        for (int64_t i0 = 0; i0 < v.q_len; i0 += positions) {
          run.block(kvv);
          for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
            for (int64_t i = i0; i < std::min(v.q_len, i0 + positions); ++i) {
              const int64_t row = v.row(b, h, i);
              const attn::KeyRange keys = v.visible_keys(i, kv);
              run.row(q.data() + row * dqk, keys.begin, keys.end, out.data() + row * v.dv * es);
            }
        }
      }
    }
    run.run();
  };
}

// One registration line per op: its view is its description's.
template <class P> void add(KernelTable& k, const OpRef<P>& op) {
  k.add_prepared(op, [op](const P& p, TensorMap& t) { return attention(view_of<attn::DenseView>(op, p), t); });
}
}  // namespace

void AttentionRun::quantize_queries(Pending& b) const {
  const int64_t rows = static_cast<int64_t>(b.q.size()), dk = b.kv.d1 + b.kv.d2;
  const int64_t padded = (dk + kInt8ScoreStep - 1) / kInt8ScoreStep * kInt8ScoreStep;
  b.q8_codes.resize(static_cast<size_t>(rows * padded));
  b.q8.resize(static_cast<size_t>(rows));
  b.q8_bias.resize(static_cast<size_t>(rows));
  b.q8_scale.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int8_t* codes = b.q8_codes.data() + r * padded;
    b.q8_scale[r] = quantize_query(b.q[r], dk, codes, padded);
    int32_t sum = 0;
    for (int64_t i = 0; i < dk; ++i) sum += codes[i];
    b.q8_bias[r] = 128 * sum;
    b.q8[r] = codes;
  }
}

void AttentionRun::run() {
  // The int8 query rows of an I8 pool's blocks (a few hundred bytes per block).
  if (int8_queries_ && kv_dt_ == DType::I8 && int8_scores_available())
    for (Pending& b : blocks_)
      if (rows_in_place(b.kv)) quantize_queries(b);
  // Tasks: each block's visible key range, cut into fixed pieces when the block is short.
  struct TaskRef { size_t block; int64_t j0, j1; size_t state; };
  ScratchVector<TaskRef> tasks;
  ScratchVector<size_t> first_task(blocks_.size() + 1);
  size_t state_floats = 0;
  const int64_t nblocks = static_cast<int64_t>(blocks_.size());
  const int64_t long_pieces = nblocks < kMinTasks ? (kMinTasks + nblocks - 1) / nblocks : 1;
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    first_task[bi] = tasks.size();
    const Pending& b = blocks_[bi];
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
    for (size_t r = 0; r < b.q.size(); ++r)
      if (b.lo[r] < b.hi[r]) lo = std::min(lo, b.lo[r]), hi = std::max(hi, b.hi[r]);
    if (lo >= hi) continue;  // nothing visible: zeros
    const int64_t rows = static_cast<int64_t>(b.q.size());
    const int64_t piece =
        rows <= kSplitMaxRows ? kSplitKeys : std::max(kSplitLongKeys, (hi - lo + long_pieces - 1) / long_pieces);
    for (int64_t j = lo; j < hi; j += piece) {
      tasks.push_back({bi, j, std::min(hi, j + piece), state_floats});
      state_floats += whole_lines(static_cast<size_t>(rows * (2 + b.kv.dv)));
    }
  }
  first_task[blocks_.size()] = tasks.size();
  // Every task sets its own state before use: reuse one buffer across calls, grown and never
  // cleared (value-initialising it zeroed up to 1 MB per call, inside the timed region).
  // (thread_local: a lambda run on a pool thread would name that thread's copy, so the tasks
  // reach it through `state_base` only.)
  thread_local std::vector<float> state_buf;
  if (state_buf.size() < state_floats + kLineFloats) state_buf.resize(state_floats + kLineFloats);
  const size_t misaligned = reinterpret_cast<uintptr_t>(state_buf.data()) / sizeof(float) % kLineFloats;
  float* const state_base = state_buf.data() + (kLineFloats - misaligned) % kLineFloats;
  // Each slice: the accumulators first (rows x dv: on whole lines where dv is a multiple of 16), then m, l.
  auto slices = [&](const TaskRef& tr, int64_t rows) {
    float* base = state_base + tr.state;
    float* m = base + rows * blocks_[tr.block].kv.dv;
    return AttnTask{tr.j0, tr.j1, m, m + rows, base};
  };

  std::atomic<bool> abandoned{false};
  parallel_tasks(static_cast<int64_t>(tasks.size()), [&](int64_t ti) {
    if (abandoned.load(std::memory_order_relaxed)) return;  // the int8 route has ended: no task counts
    const TaskRef& tr = tasks[ti];
    const Pending& b = blocks_[tr.block];
    const int64_t rows = static_cast<int64_t>(b.q.size());
    AttnTask task = slices(tr, rows);
    std::fill(task.m, task.m + rows, -std::numeric_limits<float>::infinity());
    std::fill(task.l, task.l + rows, 0.0f);
    std::fill(task.acc, task.acc + rows * b.kv.dv, 0.0f);
    const bool q8 = !b.q8.empty();
    const AttnBlock blk{b.q.data(), b.lo.data(), b.hi.data(), rows, q8 ? b.q8.data() : nullptr,
                        q8 ? b.q8_bias.data() : nullptr, q8 ? b.q8_scale.data() : nullptr, &abandoned};
    attend(kv_dt_, task, blk, b.kv, scale_);
  });
  if (abandoned.load()) {  // the int8 route met a scale that is not finite: every row on the exact route
    int8_queries_ = false;
    for (Pending& b : blocks_) b.q8.clear();
    return run();
  }

  // Merge each row's partial states in key order, then normalise and round once.
  auto merge = [&](int64_t bi) {
    const Pending& b = blocks_[bi];
    const int64_t rows = static_cast<int64_t>(b.q.size()), dv = b.kv.dv;
    ScratchVector<float> o(static_cast<size_t>(dv));
    for (int64_t r = 0; r < rows; ++r) {
      float M = -std::numeric_limits<float>::infinity();
      bool poisoned = false;  // a piece saw a NaN score: the row is NaN, as the reference's
      for (size_t ti = first_task[bi]; ti < first_task[bi + 1]; ++ti) {
        const AttnTask s = slices(tasks[ti], rows);
        if (s.l[r] > 0) M = std::max(M, s.m[r]);
        poisoned = poisoned || std::isnan(s.l[r]);
      }
      std::fill(o.begin(), o.end(), 0.0f);
      float L = 0;
      for (size_t ti = first_task[bi]; ti < first_task[bi + 1]; ++ti) {
        const AttnTask s = slices(tasks[ti], rows);
        if (!(s.l[r] > 0)) continue;
        const float w = std::exp(s.m[r] - M);
        L += s.l[r] * w;
        const float* acc = s.acc + r * dv;
        for (int64_t i = 0; i < dv; ++i) o[i] += acc[i] * w;
      }
      const float inv = L > 0 ? 1.0f / L : 0.0f;  // no visible key: zeros
      for (int64_t i = 0; i < dv; ++i) o[i] *= inv;
      if (poisoned) std::fill(o.begin(), o.end(), L = std::numeric_limits<float>::quiet_NaN());
      from_f32(out_dt_, o.data(), b.out[r], dv);
    if (b.lse[r]) *b.lse[r] = poisoned ? L : L > 0 ? M + std::log(L) : -std::numeric_limits<float>::infinity();
    }
  };
  // A decode merge (a few rows per block) is microseconds of work: on the caller alone it costs less
  // than waking the pool a second time, and waits on no worker the OS has taken off its core.
  size_t merge_floats = 0;
  for (size_t bi = 0; bi < blocks_.size(); ++bi)
    merge_floats += (first_task[bi + 1] - first_task[bi]) * blocks_[bi].q.size() * static_cast<size_t>(blocks_[bi].kv.dv);
  if (merge_floats < kSerialMergeFloats) {
    for (int64_t bi = 0; bi < nblocks; ++bi) merge(bi);
  } else {
    parallel_tasks(nblocks, merge);
  }
}

void add_attention(KernelTable& k) {
#define TS_ADD(op) add(k, ops::op);
  TS_DENSE_ATTENTION_VIEW_OPS(TS_ADD)
#undef TS_ADD
}

}  // namespace ts::cpu
