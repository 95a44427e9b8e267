// gemm: out[m, n] = a[m, k] @ b[n, k]^T. Small m (decode) is a memory-bound GEMV over the weight rows,
// done here with wide loads, several weight rows per pass and the rows split across threads. Large m
// goes to OpenBLAS's sgemm; F16 / BF16 weights are widened to F32 panel by panel on the way.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpu/common.h"
#include "cpu/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// out[i, r] for the R weight rows starting at w and the M activation rows of a (F32, stride k).
template <int R, int M, class T>
HWY_INLINE void GemvBlock(const float* HWY_RESTRICT a, const T* HWY_RESTRICT w, int64_t k, T* out, int64_t ldo) {
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
      out[i * ldo + r] = from_f<T>(s);
    }
}

template <int M, class T>
void GemvRows(const float* a, const T* w, int64_t k, int64_t r0, int64_t r1, T* out, int64_t ldo) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) GemvBlock<4, M>(a, w + r * k, k, out + r, ldo);
  for (; r < r1; ++r) GemvBlock<1, M>(a, w + r * k, k, out + r, ldo);
}

// Rows [r0, r1) of out[m, n] = a32[m, k] @ w[n, k]^T, for m <= 4.
void Gemv(DType dt, const float* a32, int64_t m, const void* w, int64_t k, int64_t r0, int64_t r1, void* out,
          int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* wt = static_cast<const T*>(w);
    T* o = static_cast<T*>(out);
    switch (m) {
      case 1: return GemvRows<1>(a32, wt, k, r0, r1, o, n);
      case 2: return GemvRows<2>(a32, wt, k, r0, r1, o, n);
      case 3: return GemvRows<3>(a32, wt, k, r0, r1, o, n);
      default: return GemvRows<4>(a32, wt, k, r0, r1, o, n);
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
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(Gemv);

namespace {
constexpr int64_t kMaxGemvRows = 4;  // above this, a blocked sgemm reuses the weights better
constexpr int64_t kPanelRows = 256;  // weight rows widened to F32 per sgemm call (F16 / BF16)

std::vector<float> widen(DType dt, const std::byte* src, int64_t rows, int64_t cols) {
  std::vector<float> dst(static_cast<size_t>(rows * cols));
  const size_t es = dtype_size(dt);
  parallel_for(rows, std::max<int64_t>(1, 16384 / cols), [&](int64_t r0, int64_t r1) {
    to_f32(dt, src + r0 * cols * es, dst.data() + r0 * cols, (r1 - r0) * cols);
  });
  return dst;
}

void gemv(const GemmParams& p, DType dt, const std::byte* a, const std::byte* b, std::byte* out) {
  std::vector<float> a32(static_cast<size_t>(p.m * p.k));
  to_f32(dt, a, a32.data(), p.m * p.k);
  const int64_t grain = std::max<int64_t>(4, 65536 / (p.k * p.m));
  parallel_for(p.n, grain, [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(Gemv)(dt, a32.data(), p.m, b, p.k, r0, r1, out, p.n);
  });
}

void sgemm_nt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c, int64_t ldc) {
  park_workers();  // OpenBLAS runs its own threads: ours must not spin beside them
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(k), 0.0f, c,
              static_cast<int>(ldc));
}

void gemm(const GemmParams& p, TensorMap& t) {
  const Tensor& a = tensor(t, "a");
  const Tensor& b = tensor(t, "b");
  Tensor& out = tensor(t, "out");
  const DType dt = a.dtype();
  // cblas takes int dimensions.
  check(p.m < (1LL << 31) && p.n < (1LL << 31) && p.k < (1LL << 31), "gemm: dimensions exceed the BLAS int range");
  if (p.m <= kMaxGemvRows) {
    return gemv(p, dt, a.data(), b.data(), out.data());
  }
  if (dt == DType::F32) return sgemm_nt(p.m, p.n, p.k, a.as<float>(), b.as<float>(), out.as<float>(), p.n);
  const std::vector<float> a32 = widen(dt, a.data(), p.m, p.k);
  std::vector<float> out32(static_cast<size_t>(p.m * p.n));
  const size_t es = dtype_size(dt);
  for (int64_t j0 = 0; j0 < p.n; j0 += kPanelRows) {
    const int64_t rows = std::min(kPanelRows, p.n - j0);
    const std::vector<float> panel = widen(dt, b.data() + j0 * p.k * es, rows, p.k);
    sgemm_nt(p.m, rows, p.k, a32.data(), panel.data(), out32.data() + j0, p.n);
  }
  parallel_for(p.m, std::max<int64_t>(1, 16384 / p.n), [&](int64_t r0, int64_t r1) {
    from_f32(dt, out32.data() + r0 * p.n, out.data() + r0 * p.n * es, (r1 - r0) * p.n);
  });
}
}  // namespace

void add_gemm(KernelTable& k) { k.add(ops::gemm, gemm); }

}  // namespace ts::cpu
#endif
