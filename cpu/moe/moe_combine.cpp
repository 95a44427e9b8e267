// The MoE combine ops on the cpu: silu_mul_stacked / _batched and the weighted sums (stacked, with the
// residual, with the next layer's RMS norm fused, batched, batched on windows of larger buffers).
// Each is one SIMD pass, rows split across threads; sums run in F32 and round once to the dtype.
// The fused norm is cpu/dense/norms.cpp's own rms_norm rows, so the fused op is exactly its chain.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/moe/moe_combine.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/dense/silu-inl.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

void SiluMulF32(const float* g, const float* u, float* out, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(SiluF32(d, hn::LoadU(d, g + i)), hn::LoadU(d, u + i)), d, out + i);
  for (; i < n; ++i) out[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

// out[h] = (base[h] +) sum_k w[k] * slots[k * stride + h] for h < n: the sum first, in slot order, then
// the base (the residual), as the reference adds them. base may be out itself (in place).
template <class T>
void CombineRow(const T* HWY_RESTRICT slots, int64_t stride, const float* HWY_RESTRICT w, int64_t top_k, const T* base,
                T* out, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t h = 0;
  for (; h + N <= n; h += N) {
    VF acc = hn::Zero(d);
    for (int64_t k = 0; k < top_k; ++k) acc = hn::MulAdd(hn::Set(d, w[k]), LoadF(d, slots + k * stride + h), acc);
    if (base) acc = hn::Add(LoadF(d, base + h), acc);
    StoreF(d, acc, out + h);
  }
  for (; h < n; ++h) {
    float acc = 0;
    for (int64_t k = 0; k < top_k; ++k) acc = std::fma(w[k], to_f(slots[k * stride + h]), acc);
    out[h] = from_f<T>(base ? to_f(base[h]) + acc : acc);
  }
}

void Combine(DType dt, const void* slots, int64_t stride, const float* w, int64_t top_k, const void* base, void* out,
             int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CombineRow(static_cast<const T*>(slots), stride, w, top_k, static_cast<const T*>(base), static_cast<T*>(out), n);
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <array>

#include "core/ops/moe_params.h"
#include "cpu/dense/norms.h"
#include "cpu/kernels.h"
#include "cpu/moe/moe_combine.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(SiluMulF32);
HWY_EXPORT(Combine);

void moe::silu_mul_f32(const float* g, const float* u, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SiluMulF32)(g, u, out, n);
}

namespace {

constexpr int64_t kGrain = 1 << 14;  // elements below which threads cost more than they save

// out = silu(gate) * up over n elements of one float dtype, widened a chunk at a time.
void silu_mul(TensorMap& t, int64_t n) {
  const Tensor& gate = tensor(t, "gate");
  const Tensor& up = tensor(t, "up");
  Tensor& out = tensor(t, "out");
  const DType dt = out.dtype();
  const int64_t es = static_cast<int64_t>(dtype_size(dt));
  parallel_for(n, kGrain, [&](int64_t lo, int64_t hi) {
    if (dt == DType::F32) return moe::silu_mul_f32(gate.as<float>() + lo, up.as<float>() + lo, out.as<float>() + lo, hi - lo);
    constexpr int64_t kChunk = 1024;
    std::array<float, kChunk> g, u;
    for (int64_t i = lo; i < hi; i += kChunk) {
      const int64_t len = std::min(kChunk, hi - i);
      to_f32(dt, gate.data() + i * es, g.data(), len);
      to_f32(dt, up.data() + i * es, u.data(), len);
      moe::silu_mul_f32(g.data(), u.data(), g.data(), len);
      from_f32(dt, g.data(), out.data() + i * es, len);
    }
  });
}

// out[b, :] (from element out_at) = (base +) sum_k weights[w_at + b * top_k + k] * slots[b, k, :], for
// b < batch; base: the in-out residual (out itself) or none. Rows and columns split across threads.
void combine(const Tensor& slots, const Tensor& weights, int64_t w_at, Tensor& out, int64_t out_at, bool add,
             int64_t batch, int64_t top_k, int64_t hidden) {
  const int64_t es = static_cast<int64_t>(dtype_size(out.dtype()));
  const int64_t tiles = std::max<int64_t>(1, hidden / kGrain);  // column tiles per row
  parallel_for(batch * tiles, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, top_k * hidden / tiles)),
               [&](int64_t t0, int64_t t1) {
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t b = t / tiles, h0 = hidden * (t % tiles) / tiles, h1 = hidden * (t % tiles + 1) / tiles;
                   std::byte* o = out.data() + (out_at + b * hidden + h0) * es;
                   HWY_DYNAMIC_DISPATCH(Combine)(out.dtype(), slots.data() + (b * top_k * hidden + h0) * es, hidden,
                                                 weights.as<float>() + w_at + b * top_k, top_k, add ? o : nullptr, o,
                                                 h1 - h0);
                 }
               });
}

}  // namespace

void add_moe_combine(KernelTable& k) {
  k.add(ops::silu_mul_stacked, [](const SiluMulStackedParams& p, TensorMap& t) { silu_mul(t, p.n_slots * p.ffn); });
  k.add(ops::silu_mul_batched, [](const SiluMulBatchedParams& p, TensorMap& t) { silu_mul(t, p.total_pairs * p.ffn); });
  k.add(ops::weighted_sum_stacked, [](const WeightedSumStackedParams& p, TensorMap& t) {
    combine(tensor(t, "slots"), tensor(t, "weights"), 0, tensor(t, "out"), 0, false, 1, p.n_slots, p.hidden);
  });
  k.add(ops::weighted_sum_residual_stacked, [](const WeightedSumStackedParams& p, TensorMap& t) {
    combine(tensor(t, "slots"), tensor(t, "weights"), 0, tensor(t, "residual"), 0, true, 1, p.n_slots, p.hidden);
  });
  k.add(ops::weighted_sum_residual_norm_stacked, [](const WeightedSumResidualNormParams& p, TensorMap& t) {
    Tensor& residual = tensor(t, "residual");
    combine(tensor(t, "slots"), tensor(t, "weights"), 0, residual, 0, true, 1, p.n_slots, p.hidden);
    rms_norm_rows(residual, tensor(t, "next_norm_w"), tensor(t, "normed_out"), 1, p.hidden, p.eps);
  });
  k.add(ops::weighted_sum_batched, [](const WeightedSumBatchedParams& p, TensorMap& t) {
    combine(tensor(t, "slots"), tensor(t, "weights"), 0, tensor(t, "out"), 0, false, p.batch, p.top_k, p.hidden);
  });
  k.add(ops::weighted_sum_batched_offset, [](const WeightedSumBatchedOffsetParams& p, TensorMap& t) {
    combine(tensor(t, "slots"), tensor(t, "weights"), p.weights_offset, tensor(t, "out"), p.out_offset, false, p.batch,
            p.top_k, p.hidden);
  });
}

}  // namespace ts::cpu
#endif
