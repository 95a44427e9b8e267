// qk_norm_rope and its batched / split-qkv / into-cache variants, and the tensor family's RoPE from
// positions. All are one transform applied to head rows (optional per-head RMS norm, then rotate-half
// RoPE at the row's position), differing only in where each row comes from and lands, and in where the
// cos / sin rows come from (tables, or computed per token). Rows are widened to F32, transformed in
// vectors, rounded once.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dense/rope.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <vector>

#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// One head row of hd elements: with `norm`, x * rsqrt(mean(x^2) + eps) * w; then the first 2 * half
// elements rotate as pairs (i, i + half) by the position's cos / sin rows (of the activation dtype T,
// or F32 when computed from a position); the rest pass through.
template <class T, class C>
void HeadRowT(const T* in, T* out, bool norm, const float* w, const C* c, const C* s, int64_t hd, int64_t half,
              float eps, bool stream) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  thread_local std::vector<float> buf;
  buf.resize(static_cast<size_t>(hd));
  float* x = buf.data();
  RowToF32(in, x, hd);
  if (norm) {
    const VF inv = hn::Set(d, 1.0f / std::sqrt(SumSquares(x, hd) / static_cast<float>(hd) + eps));
    int64_t i = 0;
    for (; i + N <= hd; i += N) hn::StoreU(hn::Mul(hn::Mul(hn::LoadU(d, x + i), inv), hn::LoadU(d, w + i)), d, x + i);
    for (; i < hd; ++i) x[i] = x[i] * hn::GetLane(inv) * w[i];
  }
  int64_t i = 0;
  for (; i + N <= half; i += N) {
    const VF a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + half + i);
    const VF cv = LoadF(d, c + i), sv = LoadF(d, s + i);
    hn::StoreU(hn::NegMulAdd(b, sv, hn::Mul(a, cv)), d, x + i);     // a cos - b sin
    hn::StoreU(hn::MulAdd(a, sv, hn::Mul(b, cv)), d, x + half + i);  // b cos + a sin
  }
  for (; i < half; ++i) {
    const float a = x[i], b = x[i + half], ci = to_f(c[i]), si = to_f(s[i]);
    x[i] = a * ci - b * si;
    x[i + half] = b * ci + a * si;
  }
  if (stream)
    RowFromF32Streaming(x, out, hd);
  else
    RowFromF32(x, out, hd);
}

void HeadRow(DType dt, const void* in, void* out, bool norm, const float* w, const void* cos_row,
             const void* sin_row, int64_t hd, int64_t half, float eps, bool stream, bool f32_tables) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (f32_tables)
      return HeadRowT(static_cast<const T*>(in), static_cast<T*>(out), norm, w, static_cast<const float*>(cos_row),
                      static_cast<const float*>(sin_row), hd, half, eps, stream);
    HeadRowT(static_cast<const T*>(in), static_cast<T*>(out), norm, w, static_cast<const T*>(cos_row),
             static_cast<const T*>(sin_row), hd, half, eps, stream);
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/ops/core_params.h"
#include "core/ops/tensor/rope_angle.h"
#include "core/ops/tensor_params.h"
#include "cpu/dense/split_rope.h"
#include "cpu/kernels.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/stream_copy.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(HeadRow);

namespace {

// The shared inputs of one call: dtype, head size, the RoPE tables and the norm weights (F32).
struct HeadTransform {
  DType dt;
  int64_t head_dim, half;  // half = rotary_dim / 2
  float eps;
  const Tensor* cos;
  const Tensor* sin;
  bool stream = false;  // outputs this large bypass the cache (RowFromF32Streaming); fenced per chunk

  // mode 0: copy; 1: RMS norm with w32, then RoPE at pos; 2: RoPE at pos.
  void apply(const std::byte* in, std::byte* out, int mode, const float* w32, int64_t pos) const {
    const size_t es = dtype_size(dt);
    if (mode == 0) return void(std::memcpy(out, in, head_dim * es));
    HWY_DYNAMIC_DISPATCH(HeadRow)(dt, in, out, mode == 1, w32, cos->data() + pos * half * es,
                                  sin->data() + pos * half * es, head_dim, half, eps, stream, false);
  }
};

HeadTransform make_transform(TensorMap& t, int64_t head_dim, int64_t rotary_dim, float eps) {
  const Tensor& cos = tensor(t, "cos");
  const int64_t rot = rotary_dim ? rotary_dim : head_dim;
  return {cos.dtype(), head_dim, rot / 2, eps, &cos, &tensor(t, "sin")};
}

ScratchVector<float> weights32(TensorMap& t, const char* name, int64_t n) {
  ScratchVector<float> w(static_cast<size_t>(n));
  const Tensor& src = tensor(t, name);
  to_f32(src.dtype(), src.data(), w.data(), n);
  return w;
}


// Runs job(r) for r in [0, rows) in parallel; a job transforms one head row with `ht`.
template <class Job> void for_rows(HeadTransform& ht, int64_t rows, Job job) {
  ht.stream = size_t(rows * ht.head_dim) * dtype_size(ht.dt) >= kStreamOutputBytes;
  parallel_for(rows, std::max<int64_t>(1, 8192 / ht.head_dim), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) job(r);
    // Streaming stores are weakly ordered: a full fence publishes them before the call returns.
    if (ht.stream) std::atomic_thread_fence(std::memory_order_seq_cst);
  });
}

// The head-major destinations of split_qkv_norm_rope(_into_cache): q_out [q_heads, tokens, hd], k and v
// [kv_heads, rows_per_head, hd] with token tok at row first_row + tok.
SplitDest head_major(const SplitQkvNormRopeParams& p, Tensor& q_out, Tensor& k, Tensor& v, int64_t rows_per_head,
                     int64_t first_row) {
  const size_t rb = p.head_dim * dtype_size(q_out.dtype());
  return {[&q_out, rb, tokens = p.tokens](int64_t h, int64_t tok) { return q_out.data() + (h * tokens + tok) * rb; },
          [&k, &v, rb, rows_per_head, first_row](bool is_k, int64_t kh, int64_t tok) {
            return (is_k ? k : v).data() + (kh * rows_per_head + first_row + tok) * rb;
          },
          {}, [pos0 = p.pos_offset](int64_t tok) { return pos0 + tok; }};
}

// apply_rope_positions / apply_rope_partial: each token's cos / sin row computed from its position
// in double (the angle pos * base^(-2i/rot), exact to the last F32 bit at any position), rounded to
// F32, then its heads rotated by the same row kernel as the table-driven ops. Parallel over tokens, so
// the trigonometry of a token is computed once and on the thread that uses it.
void rope_positions(const RopePositionsParams& p, int64_t rot, TensorMap& t) {
  const Tensor& x = tensor(t, "x");
  Tensor& out = tensor(t, "out");
  const Tensor& positions = tensor(t, "positions");
  check(positions.dtype() == DType::U32, "cpu backend: positions must be U32");
  const uint32_t* pos = positions.as<uint32_t>();
  const int64_t half = rot / 2, hd = p.head_dim;
  std::vector<double> freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) freq[i] = rope_angle::inv_freq(p.base, rot, i);
  const size_t rb = hd * dtype_size(x.dtype());
  parallel_for(p.seq, std::max<int64_t>(1, 8192 / (p.heads * hd)), [&](int64_t s0, int64_t s1) {
    std::vector<float> cs(static_cast<size_t>(2 * half));
    for (int64_t s = s0; s < s1; ++s) {
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(pos[s]) * freq[i];
        cs[i] = static_cast<float>(std::cos(angle));
        cs[half + i] = static_cast<float>(std::sin(angle));
      }
      for (int64_t h = 0; h < p.heads; ++h) {
        const int64_t r = s * p.heads + h;
        HWY_DYNAMIC_DISPATCH(HeadRow)(x.dtype(), x.data() + r * rb, out.data() + r * rb, false, nullptr, cs.data(),
                                      cs.data() + half, hd, half, 0.0f, false, true);
      }
    }
  });
}

}  // namespace

// The split over `tokens` rows of qkv starting at `qkv`, each row q heads | k heads | v heads.
void split_qkv_norm_rope(const SplitQkvNormRopeParams& p, TensorMap& t, const std::byte* qkv, int64_t tokens,
                         const SplitDest& dest) {
  HeadTransform ht = make_transform(t, p.head_dim, p.rotary_dim, p.eps);
  const size_t rb = p.head_dim * dtype_size(ht.dt);
  const auto qw = weights32(t, "q_norm_w", p.head_dim);
  const auto kw = weights32(t, "k_norm_w", p.head_dim);
  const int64_t per_token = p.q_heads + 2 * p.kv_heads;  // head rows per token in qkv
  const int mode = static_cast<int>(p.qk_mode);
  for_rows(ht, tokens * per_token, [&](int64_t r) {
    const int64_t tok = r / per_token, h = r % per_token;
    const std::byte* in = qkv + r * rb;
    const int64_t pos = dest.pos(tok);
    if (h < p.q_heads) return ht.apply(in, dest.q(h, tok), mode, qw.data(), pos);
    const bool is_k = h < p.q_heads + p.kv_heads;
    const int64_t kh = is_k ? h - p.q_heads : h - p.q_heads - p.kv_heads;
    if (dest.kv) return ht.apply(in, dest.kv(is_k, kh, tok), is_k ? mode : 0, kw.data(), pos);
    thread_local std::vector<std::byte> row;
    row.resize(rb);
    HeadTransform cached = ht;
    cached.stream = false;  // the row is read back at once
    cached.apply(in, row.data(), is_k ? mode : 0, kw.data(), pos);
    dest.scatter(is_k, kh, tok, row.data());
  });
}

void add_rope(KernelTable& k) {
  k.add(ops::apply_rope_positions,
        [](const RopePositionsParams& p, TensorMap& t) { rope_positions(p, p.head_dim, t); });
  k.add(ops::apply_rope_partial, [](const RopePartialParams& p, TensorMap& t) { rope_positions(p, p.rotary_dim, t); });
  k.add(ops::qk_norm_rope, [](const QkNormRopeParams& p, TensorMap& t) {
    HeadTransform ht = make_transform(t, p.head_dim, p.rotary_dim, p.eps);
    const auto w = weights32(t, "norm_w", p.head_dim);
    const Tensor& in = tensor(t, "input");
    Tensor& out = tensor(t, "output");
    const size_t rb = p.head_dim * dtype_size(ht.dt);
    for_rows(ht, p.tokens * p.heads, [&](int64_t r) {
      const int64_t tok = r / p.heads, h = r % p.heads;  // input is token-major, output head-major
      ht.apply(in.data() + r * rb, out.data() + (h * p.tokens + tok) * rb, static_cast<int>(p.mode), w.data(),
               p.pos_offset + tok);
    });
  });
  k.add(ops::qk_norm_rope_batched_per_item, [](const QkNormRopeBatchedPerItemParams& p,
                                                                            TensorMap& t) {
    HeadTransform ht = make_transform(t, p.head_dim, p.rotary_dim, p.eps);
    const auto w = weights32(t, "norm_w", p.head_dim);
    const Tensor& in = tensor(t, "input");
    Tensor& out = tensor(t, "output");
    const Tensor& positions = tensor(t, "positions");
    check(positions.dtype() == DType::U32, "cpu backend: positions must be U32");
    const uint32_t* pos = positions.as<uint32_t>();
    const size_t rb = p.head_dim * dtype_size(ht.dt);
    for_rows(ht, p.m * p.heads, [&](int64_t r) {
      ht.apply(in.data() + r * rb, out.data() + r * rb, static_cast<int>(p.mode), w.data(), pos[r / p.heads]);
    });
  });
  k.add(ops::split_qkv_norm_rope, [](const SplitQkvNormRopeParams& p, TensorMap& t) {
    split_qkv_norm_rope(p, t, tensor(t, "qkv").data(), p.tokens,
                        head_major(p, tensor(t, "q_out"), tensor(t, "k_out"), tensor(t, "v_out"), p.tokens, 0));
  });
  k.add(
      ops::split_qkv_norm_rope_into_cache, [](const SplitQkvNormRopeIntoCacheParams& p, TensorMap& t) {
        split_qkv_norm_rope(p, t, tensor(t, "qkv").data(), p.tokens,
                            head_major(p, tensor(t, "q_out"), tensor(t, "cache_k"), tensor(t, "cache_v"),
                                       p.cache_capacity, p.cache_len));
      });
}

}  // namespace ts::cpu
#endif
