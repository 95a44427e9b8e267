// Elementwise ops: silu, add and mul (b broadcast), gelu, add_inplace, scaled_add_inplace, add_bias,
// fused_silu_mul_split(_strided).
// Each element is widened to F32, computed, and rounded once to the tensor's dtype.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dense/elementwise.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "core/approx/normal_cdf.inc"
#include "cpu/dense/silu-inl.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// y = a + scale * b over n elements (y may alias a).
template <class T> void ScaledAdd(const T* a, const T* HWY_RESTRICT b, float scale, T* y, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  const VF vs = hn::Set(d, scale);
  int64_t i = 0;
  if (scale == 1.0f) {  // exactly a + b: no multiply to round
    for (; i + N <= n; i += N) StoreF(d, hn::Add(LoadF(d, a + i), LoadF(d, b + i)), y + i);
    for (; i < n; ++i) y[i] = from_f<T>(to_f(a[i]) + to_f(b[i]));
    return;
  }
  for (; i + N <= n; i += N) StoreF(d, hn::MulAdd(vs, LoadF(d, b + i), LoadF(d, a + i)), y + i);
  for (; i < n; ++i) y[i] = from_f<T>(to_f(a[i]) + scale * to_f(b[i]));
}

// silu(g) = g / (1 + exp(-g)), a vector (cpu/dense/silu-inl.h) and a scalar at a time: silu and every
// SiLU-gated product.
inline float SiluF32(float g) { return g / (1.0f + std::exp(-g)); }

// out = silu(gate) * up.
template <class T> void SiluMul(const T* HWY_RESTRICT gate, const T* HWY_RESTRICT up, T* HWY_RESTRICT out, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) StoreF(d, hn::Mul(SiluF32(d, LoadF(d, gate + i)), LoadF(d, up + i)), out + i);
  for (; i < n; ++i) out[i] = from_f<T>(SiluF32(to_f(gate[i])) * to_f(up[i]));
}

// out[i] = a[i] (+ or *) b[i * b_step] over n elements: b_step 1 walks a row of b, 0 repeats its one
// element (b broadcast along the row). One F32 operation, one rounding.
template <bool kMul, class T>
void BinaryRowT(const T* HWY_RESTRICT a, const T* HWY_RESTRICT b, int64_t b_step, T* HWY_RESTRICT out, int64_t n) {
  const DF d;
  const int64_t N = hn::Lanes(d);
  auto op = [](auto x, auto y) { if constexpr (kMul) return x * y; else return x + y; };
  auto vop = [](VF x, VF y) { if constexpr (kMul) return hn::Mul(x, y); else return hn::Add(x, y); };
  int64_t i = 0;
  if (b_step == 0) {
    const float b0 = to_f(b[0]);
    const VF vb = hn::Set(d, b0);
    for (; i + N <= n; i += N) StoreF(d, vop(LoadF(d, a + i), vb), out + i);
    for (; i < n; ++i) out[i] = from_f<T>(op(to_f(a[i]), b0));
    return;
  }
  for (; i + N <= n; i += N) StoreF(d, vop(LoadF(d, a + i), LoadF(d, b + i)), out + i);
  for (; i < n; ++i) out[i] = from_f<T>(op(to_f(a[i]), to_f(b[i])));
}

void BinaryRow(DType dt, bool mul, const void* a, const void* b, int64_t b_step, void* out, int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* at = static_cast<const T*>(a);
    const T* bt = static_cast<const T*>(b);
    T* o = static_cast<T*>(out);
    if (mul) BinaryRowT<true>(at, bt, b_step, o, n);
    else BinaryRowT<false>(at, bt, b_step, o, n);
  });
}

void AddScaled(DType dt, const void* a, const void* b, float scale, void* y, int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ScaledAdd(static_cast<const T*>(a), static_cast<const T*>(b), scale, static_cast<T*>(y), n);
  });
}

// Rows of gate_up [.., 2*im] (gate first) into rows of out [.., im].
void SiluMulRows(DType dt, const void* gate_up, void* out, int64_t im, int64_t rows) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t r = 0; r < rows; ++r) {
      const T* g = static_cast<const T*>(gate_up) + r * 2 * im;
      SiluMul(g, g + im, static_cast<T*>(out) + r * im, im);
    }
  });
}

// GELU (erf form) as x * Phi(x), Phi the standard normal CDF by the polynomials of
// core/approx/normal_cdf.inc (1.7 ulp worst in F32). Both of its forms are computed and blended
// per lane; +-inf and NaN give what the reference gives (inf, NaN, NaN).
HWY_INLINE VF GeluF32(DF d, VF x) {
  const VF one = hn::Set(d, 1.0f);
  const VF a = hn::Abs(x);
  const VF x2 = hn::Mul(x, x);
  VF p_near = hn::Zero(d);
#define TS_NEAR_STEP(c) p_near = hn::MulAdd(p_near, x2, hn::Set(d, static_cast<float>(c)));
  TS_PHI_NEAR(TS_NEAR_STEP)
#undef TS_NEAR_STEP
  const VF phi_near = hn::MulAdd(x, p_near, hn::Set(d, 0.5f));
  const auto is_near = hn::Le(a, hn::Set(d, static_cast<float>(TS_PHI_SPLIT)));
  if (hn::AllTrue(d, is_near)) return hn::Mul(x, phi_near);  // most vectors of activations
  const VF inv_a = hn::Div(one, a);  // 0 at +-inf, where |x| / x^2 would be inf / inf
  const VF w = hn::Mul(inv_a, inv_a);
  VF p_far = hn::Zero(d);
#define TS_FAR_STEP(c) p_far = hn::MulAdd(p_far, w, hn::Set(d, static_cast<float>(c)));
  TS_PHI_FAR(TS_FAR_STEP)
#undef TS_FAR_STEP
  // Highway's Exp is specified down to -104, where exp is 0 in F32 anyway: clamp there (x^2 = inf).
  const VF e = hn::Exp(d, hn::Max(hn::Mul(x2, hn::Set(d, -0.5f)), hn::Set(d, -104.0f)));
  const VF tail = hn::Mul(hn::Mul(e, inv_a), p_far);
  const VF phi_far = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), tail, hn::Sub(one, tail));
  return hn::Mul(x, hn::IfThenElse(is_near, phi_near, phi_far));
}

// out[i] = F(x[i]) over n elements of dtype dt, every element by the same vector formula (the last
// partial vector through a padded buffer), so an element's result does not depend on where it lies.
template <class F> void MapUnary(DType dt, const void* x, void* out, int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xt = static_cast<const T*>(x);
    T* o = static_cast<T*>(out);
    const DF d;
    const int64_t N = hn::Lanes(d);
    int64_t i = 0;
    for (; i + N <= n; i += N) StoreF(d, F::Apply(d, LoadF(d, xt + i)), o + i);
    if (i < n) {
      HWY_ALIGN float buf[hn::MaxLanes(DF())] = {};
      for (int64_t k = 0; k < n - i; ++k) buf[k] = to_f(xt[i + k]);
      hn::Store(F::Apply(d, hn::Load(d, buf)), d, buf);
      for (int64_t k = 0; k < n - i; ++k) o[i + k] = from_f<T>(buf[k]);
    }
  });
}

struct SiluOp {
  static HWY_INLINE VF Apply(DF d, VF x) { return SiluF32(d, x); }
};
struct GeluOp {
  static HWY_INLINE VF Apply(DF d, VF x) { return GeluF32(d, x); }
};

void Silu(DType dt, const void* x, void* out, int64_t n) { MapUnary<SiluOp>(dt, x, out, n); }
void Gelu(DType dt, const void* x, void* out, int64_t n) { MapUnary<GeluOp>(dt, x, out, n); }

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

#include "core/ops/core_params.h"
#include "core/ops/tensor/broadcast.h"
#include "core/ops/tensor_params.h"
#include "cpu/kernels.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(AddScaled);
HWY_EXPORT(SiluMulRows);
HWY_EXPORT(Gelu);
HWY_EXPORT(Silu);
HWY_EXPORT(BinaryRow);

namespace {
constexpr int64_t kGrain = 1 << 15;  // elements below which threads cost more than they save

// dst[i] += scale * src[i] over [0, len), in parallel.
void add_scaled(Tensor& dst, int64_t dst_off, const Tensor& src, int64_t src_off, float scale, int64_t len) {
  const size_t es = dtype_size(dst.dtype());
  parallel_for(len, kGrain, [&](int64_t lo, int64_t hi) {
    std::byte* y = dst.data() + (dst_off + lo) * es;
    HWY_DYNAMIC_DISPATCH(AddScaled)(dst.dtype(), y, src.data() + (src_off + lo) * es, scale, y, hi - lo);
  });
}

// add / mul: out's rows (i0, i1) of d2 elements, each against b's row at bcast::Strides::row.
void broadcast(const BroadcastParams& p, TensorMap& t, bool mul) {
  const Tensor& a = tensor(t, "a");
  const Tensor& b = tensor(t, "b");
  Tensor& out = tensor(t, "out");
  const size_t es = dtype_size(a.dtype());
  const bcast::Strides s = bcast::strides(p);
  parallel_for(p.d0 * p.d1, std::max<int64_t>(1, kGrain / p.d2), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      HWY_DYNAMIC_DISPATCH(BinaryRow)(a.dtype(), mul, a.data() + r * p.d2 * es,
                                      b.data() + s.row(r / p.d1, r % p.d1) * es, s.s2, out.data() + r * p.d2 * es,
                                      p.d2);
  });
}

void silu_mul_rows(const Tensor& gate_up, int64_t in_row, Tensor& out, int64_t out_row, int64_t rows, int64_t im) {
  const size_t es = dtype_size(out.dtype());
  parallel_for(rows, std::max<int64_t>(1, kGrain / (2 * im)), [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(SiluMulRows)(out.dtype(), gate_up.data() + (in_row + r0) * 2 * im * es,
                                      out.data() + (out_row + r0) * im * es, im, r1 - r0);
  });
}
}  // namespace

void add_elementwise(KernelTable& k) {
  k.add(ops::gelu, [](const GeluParams& p, TensorMap& t) {
    const Tensor& x = tensor(t, "x");
    Tensor& out = tensor(t, "out");
    const size_t es = dtype_size(x.dtype());
    parallel_for(p.len, kGrain / 8, [&](int64_t lo, int64_t hi) {
      HWY_DYNAMIC_DISPATCH(Gelu)(x.dtype(), x.data() + lo * es, out.data() + lo * es, hi - lo);
    });
  });
  k.add(ops::silu, [](const SiluParams& p, TensorMap& t) {
    const Tensor& x = tensor(t, "x");
    Tensor& out = tensor(t, "out");
    const size_t es = dtype_size(x.dtype());
    parallel_for(p.len, kGrain / 8, [&](int64_t lo, int64_t hi) {
      HWY_DYNAMIC_DISPATCH(Silu)(x.dtype(), x.data() + lo * es, out.data() + lo * es, hi - lo);
    });
  });
  k.add(ops::add, [](const BroadcastParams& p, TensorMap& t) { broadcast(p, t, false); });
  k.add(ops::mul, [](const BroadcastParams& p, TensorMap& t) { broadcast(p, t, true); });
  k.add(ops::add_inplace, [](const AddInplaceParams& p, TensorMap& t) {
    add_scaled(tensor(t, "residual"), 0, tensor(t, "x"), 0, 1.0f, p.len);
  });
  k.add(ops::scaled_add_inplace, [](const ScaledAddInplaceParams& p, TensorMap& t) {
    add_scaled(tensor(t, "dst"), 0, tensor(t, "src"), 0, p.scale, p.len);
  });
  k.add(ops::add_bias, [](const AddBiasParams& p, TensorMap& t) {
    Tensor& data = tensor(t, "data");
    const Tensor& bias = tensor(t, "bias");
    const size_t es = dtype_size(data.dtype());
    parallel_for(p.rows, std::max<int64_t>(1, kGrain / p.cols), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        std::byte* row = data.data() + r * p.cols * es;
        HWY_DYNAMIC_DISPATCH(AddScaled)(data.dtype(), row, bias.data(), 1.0f, row, p.cols);
      }
    });
  });
  k.add(ops::fused_silu_mul_split, [](const FusedSiluMulSplitParams& p, TensorMap& t) {
    silu_mul_rows(tensor(t, "gate_up"), 0, tensor(t, "out"), 0, p.tokens, p.im);
  });
  k.add(
      ops::fused_silu_mul_split_strided, [](const FusedSiluMulSplitStridedParams& p, TensorMap& t) {
        silu_mul_rows(tensor(t, "gate_up"), p.in_row_offset, tensor(t, "out"), p.out_row_offset, p.tokens,
                      p.intermediate);
      });
}

}  // namespace ts::cpu
#endif
