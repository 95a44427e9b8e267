// SiLU in F32 lanes, per target (Highway's re-includable -inl.h pattern): every cpu kernel that applies
// it (silu, the SiLU-gated products, the moe combine's silu_mul) takes it from here.
#if defined(TS_CPU_SILU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TS_CPU_SILU_INL_H_
#undef TS_CPU_SILU_INL_H_
#else
#define TS_CPU_SILU_INL_H_
#endif

#include "cpu/runtime/simd-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// silu(g) = g / (1 + exp(-g)). Highway's Exp holds only up to an argument of 104 (past it the result
// is neither e^x nor Inf), so below g = -88, where e^-g leaves F32's range, the lanes take
// g e^(g/2) e^(g/2) instead: the same value to F32 (1 + e^g is 1), the halves keeping e^(g/2) normal
// down to g = -174, and tending to -0 as the reference's g / (1 + Inf) does.
HWY_INLINE VF SiluF32(DF d, VF g) {
  const VF plain = hn::Div(g, hn::Add(hn::Set(d, 1.0f), hn::Exp(d, hn::Neg(g))));
  const VF half = hn::Exp(d, hn::Mul(g, hn::Set(d, 0.5f)));
  return hn::IfThenElse(hn::Lt(g, hn::Set(d, -88.0f)), hn::Mul(hn::Mul(g, half), half), plain);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TS_CPU_SILU_INL_H_
