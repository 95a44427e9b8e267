// rms_norm, fused_add_rms_norm, layer_norm: one row per token, rows split across threads. Rows are
// read in their own dtype and widened in registers; statistics accumulate in F32.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dense/norms.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

template <class T> float SumSquaresT(const T* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  VF s0 = hn::Zero(d), s1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    const VF a = LoadF(d, x + i), b = LoadF(d, x + i + N);
    s0 = hn::MulAdd(a, a, s0);
    s1 = hn::MulAdd(b, b, s1);
  }
  for (; i + N <= n; i += N) {
    const VF a = LoadF(d, x + i);
    s0 = hn::MulAdd(a, a, s0);
  }
  float s = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  for (; i < n; ++i) s += to_f(x[i]) * to_f(x[i]);
  return s;
}

// out = (x - shift) * mul * w (+ b when given).
template <class T>
void ScaleRow(const T* HWY_RESTRICT x, float shift, float mul, const T* HWY_RESTRICT w, const T* HWY_RESTRICT b,
              T* HWY_RESTRICT out, int64_t n, bool stream) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF vs = hn::Set(d, shift), vm = hn::Set(d, mul);
  int64_t i = 0;
  // Large F32 outputs bypass the cache with streaming stores: the row would otherwise be read in
  // (write-allocate) only to be overwritten, a third more memory traffic on a memory-bound op.
  if constexpr (std::is_same_v<T, float>) {
    if (stream && reinterpret_cast<uintptr_t>(out) % (N * sizeof(float)) == 0) {
      for (; i + N <= n; i += N) {
        VF y = hn::Mul(hn::Mul(hn::Sub(LoadF(d, x + i), vs), vm), LoadF(d, w + i));
        if (b) y = hn::Add(y, LoadF(d, b + i));
        hn::Stream(y, d, out + i);
      }
    }
  }
  for (; i + N <= n; i += N) {
    VF y = hn::Mul(hn::Mul(hn::Sub(LoadF(d, x + i), vs), vm), LoadF(d, w + i));
    if (b) y = hn::Add(y, LoadF(d, b + i));
    StoreF(d, y, out + i);
  }
  for (; i < n; ++i) {
    float y = (to_f(x[i]) - shift) * mul * to_f(w[i]);
    if (b) y += to_f(b[i]);
    out[i] = from_f<T>(y);
  }
}

// residual += x, rounded to T as stored.
template <class T> void AddInto(T* HWY_RESTRICT res, const T* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) StoreF(d, hn::Add(LoadF(d, res + i), LoadF(d, x + i)), res + i);
  for (; i < n; ++i) res[i] = from_f<T>(to_f(res[i]) + to_f(x[i]));
}

template <class T> float SumT(const T* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  VF s0 = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) s0 = hn::Add(s0, LoadF(d, x + i));
  float s = hn::GetLane(hn::SumOfLanes(d, s0));
  for (; i < n; ++i) s += to_f(x[i]);
  return s;
}

template <class T> float SumSqDevT(const T* HWY_RESTRICT x, float mean, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF vm = hn::Set(d, mean);
  VF s0 = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const VF c = hn::Sub(LoadF(d, x + i), vm);
    s0 = hn::MulAdd(c, c, s0);
  }
  float s = hn::GetLane(hn::SumOfLanes(d, s0));
  for (; i < n; ++i) s += (to_f(x[i]) - mean) * (to_f(x[i]) - mean);
  return s;
}

// kind 0: rms_norm, 1: fused_add_rms_norm (res is the in-out residual), 2: layer_norm.
void NormRows(int kind, DType dt, void* res, const void* x, const void* w, const void* b, void* out, int64_t dim,
              float eps, int64_t r0, int64_t r1, bool stream) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* wt = static_cast<const T*>(w);
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = static_cast<const T*>(x) + r * dim;
      T* outr = static_cast<T*>(out) + r * dim;
      if (kind == 1) {
        T* rr = static_cast<T*>(res) + r * dim;
        AddInto(rr, xr, dim);
        xr = rr;  // the norm reads the residual as stored
      }
      if (kind == 2) {
        const float mean = SumT(xr, dim) / static_cast<float>(dim);
        const float var = SumSqDevT(xr, mean, dim) / static_cast<float>(dim);
        ScaleRow(xr, mean, 1.0f / std::sqrt(var + eps), wt, static_cast<const T*>(b), outr, dim, stream);
      } else {
        const float ms = SumSquaresT(xr, dim) / static_cast<float>(dim);
        ScaleRow<T>(xr, 0.0f, 1.0f / std::sqrt(ms + eps), wt, nullptr, outr, dim, stream);
      }
    }
  });
  // Streaming stores are weakly ordered: a full fence (mfence on x86) publishes them before the
  // pool reports this share done.
  if (stream) std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

#include "core/ops/core_params.h"
#include "cpu/dense/norms.h"
#include "cpu/kernels.h"
#include "cpu/runtime/stream_copy.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(NormRows);

namespace {

void run_rows(int kind, const RmsNormParams& p, void* res, const Tensor& x, const Tensor& w, const Tensor* b,
              Tensor& out) {
  const void* bp = b ? b->data() : nullptr;
  // An output this large will not stay in cache for the next op anyway: stream it (see ScaleRow).
  const bool stream = out.nbytes() >= kStreamOutputBytes;
  parallel_for(p.tokens, std::max<int64_t>(1, 16384 / p.dim), [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(NormRows)(kind, x.dtype(), res, x.data(), w.data(), bp, out.data(), p.dim, p.eps, r0, r1, stream);
  });
}
}  // namespace

void rms_norm_rows(const Tensor& x, const Tensor& w, Tensor& out, int64_t rows, int64_t dim, float eps) {
  run_rows(0, RmsNormParams{rows, dim, eps}, nullptr, x, w, nullptr, out);
}

void add_norms(KernelTable& k) {
  k.add(ops::rms_norm, [](const RmsNormParams& p, TensorMap& t) {
    run_rows(0, p, nullptr, tensor(t, "x"), tensor(t, "w"), nullptr, tensor(t, "out"));
  });
  k.add(ops::fused_add_rms_norm, [](const FusedAddRmsNormParams& p, TensorMap& t) {
    Tensor& res = tensor(t, "residual");
    run_rows(1, p, res.data(), tensor(t, "x"), tensor(t, "w"), nullptr, tensor(t, "out"));
  });
  k.add(ops::layer_norm, [](const LayerNormParams& p, TensorMap& t) {
    const Tensor& beta = tensor(t, "beta");
    run_rows(2, p, nullptr, tensor(t, "x"), tensor(t, "gamma"), &beta, tensor(t, "out"));
  });
}

}  // namespace ts::cpu
#endif
