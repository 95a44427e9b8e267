// gemm, linear_3d, linear_3d_bias: out[m, n] = a[m, k] @ b[n, k]^T (+ bias[n]). Small m (decode) is a
// memory-bound GEMV over the weight rows, done here with wide loads, several weight rows per pass and
// the rows split across threads. Large m goes to OpenBLAS's sgemm; F16 / BF16 weights are widened to
// F32 panel by panel on the way.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dense/gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// out[i, r] for the R weight rows starting at w and the M activation rows of a (F32, stride k), plus
// bias[r] (F32, may be null) before the one rounding.
template <int R, int M, class T>
HWY_INLINE void GemvBlock(const float* HWY_RESTRICT a, const T* HWY_RESTRICT w, int64_t k, T* out, int64_t ldo,
                          const float* bias) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  VF acc[M][R];
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) acc[i][r] = hn::Zero(d);
  int64_t j = 0;
  for (; j + N <= k; j += N) {
    VF wv[R];
    for (int r = 0; r < R; ++r) wv[r] = LoadF(d, w + r * k + j);
    for (int i = 0; i < M; ++i) {
      const VF x = hn::LoadU(d, a + i * k + j);
      for (int r = 0; r < R; ++r) acc[i][r] = hn::MulAdd(wv[r], x, acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r) {
      float s = hn::GetLane(hn::SumOfLanes(d, acc[i][r]));
      for (int64_t jj = j; jj < k; ++jj) s += a[i * k + jj] * to_f(w[r * k + jj]);
      out[i * ldo + r] = from_f<T>(bias ? s + bias[r] : s);
    }
}

template <int M, class T>
void GemvRows(const float* a, const T* w, int64_t k, int64_t r0, int64_t r1, T* out, int64_t ldo, const float* bias) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) GemvBlock<4, M>(a, w + r * k, k, out + r, ldo, bias ? bias + r : nullptr);
  for (; r < r1; ++r) GemvBlock<1, M>(a, w + r * k, k, out + r, ldo, bias ? bias + r : nullptr);
}

// Rows [r0, r1) of out[m, n] = a32[m, k] @ w[n, k]^T (+ bias[n] when not null), for m <= 4.
void Gemv(DType dt, const float* a32, int64_t m, const void* w, int64_t k, int64_t r0, int64_t r1, void* out,
          int64_t n, const float* bias) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* wt = static_cast<const T*>(w);
    T* o = static_cast<T*>(out);
    switch (m) {
      case 1: return GemvRows<1>(a32, wt, k, r0, r1, o, n, bias);
      case 2: return GemvRows<2>(a32, wt, k, r0, r1, o, n, bias);
      case 3: return GemvRows<3>(a32, wt, k, r0, r1, o, n, bias);
      default: return GemvRows<4>(a32, wt, k, r0, r1, o, n, bias);
    }
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "core/ops/core_params.h"
#include "core/ops/tensor_params.h"
#include "cpu/kernels.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(Gemv);

namespace {
constexpr int64_t kMaxGemvRows = 4;  // above this, a blocked sgemm reuses the weights better
constexpr int64_t kPanelRows = 256;  // weight rows widened to F32 per sgemm call (F16 / BF16)

ScratchVector<float> widen(DType dt, const std::byte* src, int64_t rows, int64_t cols) {
  ScratchVector<float> dst(static_cast<size_t>(rows * cols));
  const size_t es = dtype_size(dt);
  parallel_for(rows, std::max<int64_t>(1, 16384 / cols), [&](int64_t r0, int64_t r1) {
    to_f32(dt, src + r0 * cols * es, dst.data() + r0 * cols, (r1 - r0) * cols);
  });
  return dst;
}

void gemv(const GemmParams& p, DType dt, const std::byte* a, const std::byte* b, std::byte* out, const float* bias) {
  ScratchVector<float> a32(static_cast<size_t>(p.m * p.k));
  to_f32(dt, a, a32.data(), p.m * p.k);
  const int64_t grain = std::max<int64_t>(4, 65536 / (p.k * p.m));
  parallel_for(p.n, grain, [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(Gemv)(dt, a32.data(), p.m, b, p.k, r0, r1, out, p.n, bias);
  });
}

void sgemm_nt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c, int64_t ldc) {
  park_workers();  // OpenBLAS runs its own threads: ours must not spin beside them
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(k), 0.0f, c,
              static_cast<int>(ldc));
}

// r[i, :] += bias for the m rows of r[m, n] (F32), in parallel.
void add_rows(float* r, const float* bias, int64_t m, int64_t n) {
  parallel_for(m, std::max<int64_t>(1, 16384 / n), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < n; ++j) r[i * n + j] += bias[j];
  });
}

// out[m, n] = a[m, k] @ b[n, k]^T (+ bias[n], F32, when not null), every tensor of dtype dt. The
// bias joins the F32 result before its one rounding to dt (F32 outputs: one more F32 addition).
void gemm_rows(const GemmParams& p, DType dt, const std::byte* a, const std::byte* b, std::byte* out,
               const float* bias) {
  // cblas takes int dimensions.
  check(p.m < (1LL << 31) && p.n < (1LL << 31) && p.k < (1LL << 31), "gemm: dimensions exceed the BLAS int range");
  if (p.m <= kMaxGemvRows) return gemv(p, dt, a, b, out, bias);
  if (dt == DType::F32) {
    float* o = reinterpret_cast<float*>(out);
    sgemm_nt(p.m, p.n, p.k, reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), o, p.n);
    if (bias) add_rows(o, bias, p.m, p.n);
    return;
  }
  const ScratchVector<float> a32 = widen(dt, a, p.m, p.k);
  ScratchVector<float> out32(static_cast<size_t>(p.m * p.n));
  const size_t es = dtype_size(dt);
  for (int64_t j0 = 0; j0 < p.n; j0 += kPanelRows) {
    const int64_t rows = std::min(kPanelRows, p.n - j0);
    const ScratchVector<float> panel = widen(dt, b + j0 * p.k * es, rows, p.k);
    sgemm_nt(p.m, rows, p.k, a32.data(), panel.data(), out32.data() + j0, p.n);
  }
  if (bias) add_rows(out32.data(), bias, p.m, p.n);
  parallel_for(p.m, std::max<int64_t>(1, 16384 / p.n), [&](int64_t r0, int64_t r1) {
    from_f32(dt, out32.data() + r0 * p.n, out + r0 * p.n * es, (r1 - r0) * p.n);
  });
}

void gemm(const GemmParams& p, TensorMap& t) {
  const Tensor& a = tensor(t, "a");
  gemm_rows(p, a.dtype(), a.data(), tensor(t, "b").data(), tensor(t, "out").data(), nullptr);
}

// linear_3d(_bias): the same engine over the batch * seq rows of x, the bias widened to F32 once.
void linear_3d(const Linear3dParams& p, TensorMap& t, bool with_bias) {
  const Tensor& x = tensor(t, "x");
  ScratchVector<float> bias;
  if (with_bias) bias = widen_all(tensor(t, "bias"));
  gemm_rows({p.batch * p.seq, p.n, p.k}, x.dtype(), x.data(), tensor(t, "weight").data(), tensor(t, "out").data(),
            with_bias ? bias.data() : nullptr);
}
}  // namespace

void add_gemm(KernelTable& k) {
  k.add(ops::gemm, gemm);
  k.add(ops::linear_3d, [](const Linear3dParams& p, TensorMap& t) { linear_3d(p, t, false); });
  k.add(ops::linear_3d_bias, [](const Linear3dBiasParams& p, TensorMap& t) { linear_3d(p, t, true); });
}

}  // namespace ts::cpu
#endif
