// flash_attention, mla_attention and flash_attention_batched_per_cache on one core: a block of query
// rows (F32) against a range of key rows, online softmax over tiles of keys, reading only keys some
// row can see (rows outside the visible range may hold NaN). Work is split over (sequence, kv head,
// query block) and, for short query blocks (decode), over fixed key ranges too; the partial softmax
// states of a block are then merged in key order, so results do not depend on thread timing.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/attention.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <limits>
#include <vector>

#include "cpu/attention_core.h"
#include "cpu/common.h"
#include "cpu/simd-inl.h"
#include "hwy/cache_control.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

constexpr int64_t kTile = 64;  // keys per online-softmax step

// p[i] = exp(s[i] - m) for i < n.
HWY_INLINE void ExpShifted(float* s, float m, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF vm = hn::Set(d, m);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Exp(d, hn::Sub(hn::LoadU(d, s + i), vm)), d, s + i);
  for (; i < n; ++i) s[i] = std::exp(s[i] - m);
}

// acc[c] += sum_j p[j] * v[j][c], v row j at v0 + j * vstride; acc held in registers across keys.
HWY_INLINE void AccumulateValues(const float* HWY_RESTRICT p, int64_t n, const float* v0, int64_t vstride,
                                 float* HWY_RESTRICT acc, int64_t dv) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t c = 0;
  for (; c + 4 * N <= dv; c += 4 * N) {
    VF a0 = hn::LoadU(d, acc + c), a1 = hn::LoadU(d, acc + c + N);
    VF a2 = hn::LoadU(d, acc + c + 2 * N), a3 = hn::LoadU(d, acc + c + 3 * N);
    for (int64_t j = 0; j < n; ++j) {
      const VF pj = hn::Set(d, p[j]);
      const float* vr = v0 + j * vstride + c;
      a0 = hn::MulAdd(pj, hn::LoadU(d, vr), a0);
      a1 = hn::MulAdd(pj, hn::LoadU(d, vr + N), a1);
      a2 = hn::MulAdd(pj, hn::LoadU(d, vr + 2 * N), a2);
      a3 = hn::MulAdd(pj, hn::LoadU(d, vr + 3 * N), a3);
    }
    hn::StoreU(a0, d, acc + c);
    hn::StoreU(a1, d, acc + c + N);
    hn::StoreU(a2, d, acc + c + 2 * N);
    hn::StoreU(a3, d, acc + c + 3 * N);
  }
  for (; c + N <= dv; c += N) {
    VF a0 = hn::LoadU(d, acc + c);
    for (int64_t j = 0; j < n; ++j) a0 = hn::MulAdd(hn::Set(d, p[j]), hn::LoadU(d, v0 + j * vstride + c), a0);
    hn::StoreU(a0, d, acc + c);
  }
  for (; c < dv; ++c) {
    float a = acc[c];
    for (int64_t j = 0; j < n; ++j) a += p[j] * v0[j * vstride + c];
    acc[c] = a;
  }
}

// Prefetches every cache line of [p, p + bytes).
HWY_INLINE void Prefetch(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) hwy::Prefetch(c + off);
}

template <class T> void AttendT(const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale) {
  const int64_t dk = kv.d1 + kv.d2;
  // K rows used in place when they are F32 and in one piece; otherwise widened per tile.
  const bool k_direct = std::is_same_v<T, float> && kv.d2 == 0;
  const bool v_direct = std::is_same_v<T, float> && kv.v != nullptr;
  thread_local std::vector<float> kbuf, vbuf;
  if (!k_direct) kbuf.resize(static_cast<size_t>(kTile * dk));
  if (!v_direct && kv.v) vbuf.resize(static_cast<size_t>(kTile * kv.dv));
  float s[kTile];
  const T* k1 = static_cast<const T*>(kv.k1);
  const T* k2 = static_cast<const T*>(kv.k2);
  const T* v = static_cast<const T*>(kv.v);

  for (int64_t t0 = task.j0; t0 < task.j1; t0 += kTile) {
    const int64_t t1 = std::min(t0 + kTile, task.j1);
    int64_t ua = t1, ub = t0;  // keys of this tile some row sees
    for (int64_t r = 0; r < blk.rows; ++r) {
      const int64_t a = std::max(blk.lo[r], t0), b = std::min(blk.hi[r], t1);
      if (a < b) ua = std::min(ua, a), ub = std::max(ub, b);
    }
    if (ua >= ub) continue;
    // Decode is a stream over K and V: ask for the next tile while this one computes.
    for (int64_t j = t1; j < std::min(t1 + kTile, task.j1); ++j) {
      Prefetch(k1 + j * kv.ks1, kv.d1 * sizeof(T));
      if (kv.v) Prefetch(v + j * kv.vs, kv.dv * sizeof(T));
    }
    if (!k_direct)
      for (int64_t j = ua; j < ub; ++j) {
        float* dst = kbuf.data() + (j - t0) * dk;
        RowToF32(k1 + j * kv.ks1, dst, kv.d1);
        if (kv.d2) RowToF32(k2 + j * kv.ks2, dst + kv.d1, kv.d2);
      }
    if (!v_direct && kv.v)
      for (int64_t j = ua; j < ub; ++j) RowToF32(v + j * kv.vs, vbuf.data() + (j - t0) * kv.dv, kv.dv);
    auto krow = [&](int64_t j) -> const float* {
      if constexpr (std::is_same_v<T, float>)
        if (k_direct) return k1 + j * kv.ks1;
      return kbuf.data() + (j - t0) * dk;
    };
    auto vrow = [&](int64_t j) -> const float* {
      if (!kv.v) return krow(j);  // MLA: the values are the first key segment
      if constexpr (std::is_same_v<T, float>) return v + j * kv.vs;
      return vbuf.data() + (j - t0) * kv.dv;
    };

    for (int64_t r = 0; r < blk.rows; ++r) {
      const int64_t a = std::max(blk.lo[r], t0), b = std::min(blk.hi[r], t1);
      if (a >= b) continue;
      const float* q = blk.q[r];
      float mt = -std::numeric_limits<float>::infinity();
      for (int64_t j = a; j < b; ++j) {
        s[j - a] = Dot(q, krow(j), dk) * scale;
        mt = std::max(mt, s[j - a]);
      }
      float& m = task.m[r];
      float& l = task.l[r];
      float* acc = task.acc + r * kv.dv;
      const float mn = std::max(m, mt);
      if (m != mn) {
        const float corr = m == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(m - mn);
        l *= corr;
        Scale(corr, acc, kv.dv);
        m = mn;
      }
      ExpShifted(s, mn, b - a);
      for (int64_t j = a; j < b; ++j) l += s[j - a];
      const int64_t vstride = b - a > 1 ? vrow(a + 1) - vrow(a) : 0;  // every layout here is strided
      AccumulateValues(s, b - a, vrow(a), vstride, acc, kv.dv);
    }
  }
}

void Attend(DType dt, const AttnTask& task, const AttnBlock& blk, const KvView& kv, float scale) {
  visit_float(dt, [&](auto tag) { AttendT<typename decltype(tag)::type>(task, blk, kv, scale); });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "core/ops/core_params.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(Attend);

namespace {
constexpr int64_t kSplitKeys = 512;     // key range per task when a block has few query rows
constexpr int64_t kSplitMaxRows = 16;   // blocks up to this many rows are split over keys
constexpr int64_t kRowsPerBlock = 64;   // query rows (heads x positions) per block

// Visible keys of a query at absolute position P (OPS.md, "Attention visibility").
std::pair<int64_t, int64_t> visible(int64_t P, int64_t kv_len, bool causal, int64_t window) {
  const int64_t lo = window > 0 ? std::max<int64_t>(0, P + 1 - window) : 0;
  const int64_t hi = causal ? std::min(kv_len, P + 1) : kv_len;
  return {lo, std::max(lo, hi)};
}

// Collects blocks, splits them into tasks, runs, merges and writes outputs.
class AttentionRun {
 public:
  AttentionRun(DType dt, float scale) : dt_(dt), scale_(scale) {}

  // Starts a block of query rows over `kv`; add rows with row() next.
  void block(const KvView& kv) { blocks_.push_back({kv, {}, {}, {}, {}}); }
  void row(const float* q, int64_t lo, int64_t hi, std::byte* out) {
    Pending& b = blocks_.back();
    b.q.push_back(q);
    b.lo.push_back(lo);
    b.hi.push_back(hi);
    b.out.push_back(out);
  }

  void run() {
    // Tasks: each block's visible key range, cut into fixed pieces when the block is short.
    struct TaskRef { size_t block; int64_t j0, j1; size_t state; };
    std::vector<TaskRef> tasks;
    std::vector<size_t> first_task(blocks_.size() + 1);
    size_t state_floats = 0;
    for (size_t bi = 0; bi < blocks_.size(); ++bi) {
      first_task[bi] = tasks.size();
      const Pending& b = blocks_[bi];
      int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
      for (size_t r = 0; r < b.q.size(); ++r)
        if (b.lo[r] < b.hi[r]) lo = std::min(lo, b.lo[r]), hi = std::max(hi, b.hi[r]);
      if (lo >= hi) continue;  // nothing visible: zeros
      const int64_t rows = static_cast<int64_t>(b.q.size());
      const int64_t piece = rows <= kSplitMaxRows ? kSplitKeys : hi - lo;
      for (int64_t j = lo; j < hi; j += piece) {
        tasks.push_back({bi, j, std::min(hi, j + piece), state_floats});
        state_floats += static_cast<size_t>(rows * (2 + b.kv.dv));
      }
    }
    first_task[blocks_.size()] = tasks.size();
    std::vector<float> state(state_floats);
    auto slices = [&](const TaskRef& tr, int64_t rows) {
      float* base = state.data() + tr.state;
      return AttnTask{tr.j0, tr.j1, base, base + rows, base + 2 * rows};
    };

    parallel_tasks(static_cast<int64_t>(tasks.size()), [&](int64_t ti) {
      const TaskRef& tr = tasks[ti];
      const Pending& b = blocks_[tr.block];
      const int64_t rows = static_cast<int64_t>(b.q.size());
      AttnTask task = slices(tr, rows);
      std::fill(task.m, task.m + rows, -std::numeric_limits<float>::infinity());
      std::fill(task.l, task.l + rows, 0.0f);
      std::fill(task.acc, task.acc + rows * b.kv.dv, 0.0f);
      const AttnBlock blk{b.q.data(), b.lo.data(), b.hi.data(), rows};
      HWY_DYNAMIC_DISPATCH(Attend)(dt_, task, blk, b.kv, scale_);
    });

    // Merge each row's partial states in key order, then normalise and round once.
    parallel_tasks(static_cast<int64_t>(blocks_.size()), [&](int64_t bi) {
      const Pending& b = blocks_[bi];
      const int64_t rows = static_cast<int64_t>(b.q.size()), dv = b.kv.dv;
      std::vector<float> o(static_cast<size_t>(dv));
      for (int64_t r = 0; r < rows; ++r) {
        float M = -std::numeric_limits<float>::infinity();
        for (size_t ti = first_task[bi]; ti < first_task[bi + 1]; ++ti) {
          const AttnTask s = slices(tasks[ti], rows);
          if (s.l[r] > 0) M = std::max(M, s.m[r]);
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
        from_f32(dt_, o.data(), b.out[r], dv);
      }
    });
  }

 private:
  struct Pending {
    KvView kv;
    std::vector<const float*> q;
    std::vector<int64_t> lo, hi;
    std::vector<std::byte*> out;
  };
  DType dt_;
  float scale_;
  std::vector<Pending> blocks_;
};

std::vector<float> widen_all(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  to_f32(t.dtype(), t.data(), v.data(), t.numel());
  return v;
}

void flash_attention(const FlashAttentionParams& p, TensorMap& t) {
  const Tensor& k = tensor(t, "k");
  const Tensor& v = tensor(t, "v");
  Tensor& out = tensor(t, "out");
  const DType dt = k.dtype();
  const size_t es = dtype_size(dt);
  const std::vector<float> q = widen_all(tensor(t, "q"));
  const int64_t group = p.num_heads / p.num_kv_heads, S = p.kv_rows(), hd = p.head_dim;
  const int64_t positions = std::max<int64_t>(1, kRowsPerBlock / group);
  AttentionRun run(dt, p.scale);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t kh = 0; kh < p.num_kv_heads; ++kh) {
      const int64_t kv_off = (b * p.num_kv_heads + kh) * S * hd;
      const KvView kv{k.data() + kv_off * es, hd, nullptr, 0, v.data() + kv_off * es, hd, hd, 0, hd};
      for (int64_t i0 = 0; i0 < p.q_len; i0 += positions) {
        run.block(kv);
        for (int64_t h = kh * group; h < (kh + 1) * group; ++h)
          for (int64_t i = i0; i < std::min(p.q_len, i0 + positions); ++i) {
            const auto [lo, hi] = visible(p.pos_offset + i, p.kv_len, p.causal, p.sliding_window);
            const int64_t row = (b * p.num_heads + h) * p.q_len + i;
            run.row(q.data() + row * hd, lo, hi, out.data() + row * hd * es);
          }
      }
    }
  run.run();
}

void mla_attention(const MlaAttentionParams& p, TensorMap& t) {
  const Tensor& c = tensor(t, "kv_compressed");
  const Tensor& kr = tensor(t, "kv_rope");
  Tensor& out = tensor(t, "out");
  const DType dt = c.dtype();
  const size_t es = dtype_size(dt);
  const std::vector<float> q = widen_all(tensor(t, "q"));
  const int64_t r = p.kv_lora_rank, dr = p.qk_rope_head_dim;
  const int64_t positions = std::max<int64_t>(1, kRowsPerBlock / p.num_heads);
  AttentionRun run(dt, p.scale);
  for (int64_t b = 0; b < p.batch; ++b) {
    // Every head shares the one latent kv: keys [c | k_rope], values c.
    const KvView kv{c.data() + b * p.kv_len * r * es, r, kr.data() + b * p.kv_len * dr * es, dr, nullptr, 0, r, dr, r};
    for (int64_t i0 = 0; i0 < p.q_len; i0 += positions) {
      run.block(kv);
      for (int64_t h = 0; h < p.num_heads; ++h)
        for (int64_t i = i0; i < std::min(p.q_len, i0 + positions); ++i) {
          const auto [lo, hi] = visible(p.pos_offset + i, p.kv_len, p.causal, 0);
          const int64_t row = (b * p.num_heads + h) * p.q_len + i;
          run.row(q.data() + row * (r + dr), lo, hi, out.data() + row * r * es);
        }
    }
  }
  run.run();
}

void flash_attention_batched_per_cache(const FlashAttentionBatchedPerCacheParams& p, TensorMap& t) {
  Tensor& out = tensor(t, "out");
  const Tensor& lens_t = tensor(t, "kv_lens");
  check(lens_t.dtype() == DType::U32, "cpu backend: kv_lens must be U32");
  const uint32_t* lens = lens_t.as<uint32_t>();
  const DType dt = out.dtype();
  const size_t es = dtype_size(dt);
  const std::vector<float> q = widen_all(tensor(t, "q"));
  const int64_t group = p.nq / p.nkv, hd = p.hd;
  AttentionRun run(dt, p.scale);
  for (int64_t i = 0; i < p.m; ++i) {
    const Tensor& kc = tensor(t, fmt::format("k_caches.{}", i));
    const Tensor& vc = tensor(t, fmt::format("v_caches.{}", i));
    for (int64_t kh = 0; kh < p.nkv; ++kh) {
      const int64_t off = kh * p.capacity * hd;
      run.block({kc.data() + off * es, hd, nullptr, 0, vc.data() + off * es, hd, hd, 0, hd});
      for (int64_t h = kh * group; h < (kh + 1) * group; ++h) {
        const int64_t row = i * p.nq + h;
        run.row(q.data() + row * hd, 0, lens[i], out.data() + row * hd * es);
      }
    }
  }
  run.run();
}
}  // namespace

void add_attention(KernelTable& k) {
  k.add<FlashAttentionParams>("flash_attention", flash_attention);
  k.add<MlaAttentionParams>("mla_attention", mla_attention);
  k.add<FlashAttentionBatchedPerCacheParams>("flash_attention_batched_per_cache", flash_attention_batched_per_cache);
}

}  // namespace ts::cpu
#endif
