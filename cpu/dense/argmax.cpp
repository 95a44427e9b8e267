// argmax_rows: ids[r] = the first index of the maximum of logits row r, rows split across threads.
// Each lane keeps the first index of its own running maximum (strictly greater replaces, so a NaN
// never wins and ties keep the earlier index); the lanes then agree on the largest value and, among
// lanes holding it, the smallest index. Values are widened to F32, which is exact for every dtype,
// so ties stay ties. A row with no value above -inf gives 0, as the reference does.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/dense/argmax.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>
#include <limits>

#include "cpu/runtime/common.h"
#include "cpu/runtime/simd-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

template <class T> uint32_t ArgmaxRow(const T* HWY_RESTRICT x, int64_t n) {
  const DF d;
  const hn::RebindToSigned<DF> di;
  using VI = hn::Vec<decltype(di)>;
  const int64_t N = hn::Lanes(d);
  VF best = hn::Set(d, -std::numeric_limits<float>::infinity());
  VI best_i = hn::Zero(di), idx = hn::Iota(di, 0);
  const VI step = hn::Set(di, static_cast<int32_t>(N));
  int64_t i = 0;
  for (; i + N <= n; i += N, idx = hn::Add(idx, step)) {
    const VF v = LoadF(d, x + i);
    const auto gt = hn::Gt(v, best);
    best = hn::IfThenElse(gt, v, best);
    best_i = hn::IfThenElse(hn::RebindMask(di, gt), idx, best_i);
  }
  HWY_ALIGN float lane_best[hn::MaxLanes(DF())];
  HWY_ALIGN int32_t lane_i[hn::MaxLanes(DF())];
  hn::Store(best, d, lane_best);
  hn::Store(best_i, di, lane_i);
  float m = -std::numeric_limits<float>::infinity();
  int64_t at = 0;
  for (int64_t l = 0; l < N; ++l)
    if (lane_best[l] > m || (lane_best[l] == m && m > -std::numeric_limits<float>::infinity() && lane_i[l] < at))
      m = lane_best[l], at = lane_i[l];
  for (; i < n; ++i)  // the tail comes after every lane's elements: strictly greater only
    if (to_f(x[i]) > m) m = to_f(x[i]), at = i;
  return static_cast<uint32_t>(at);
}

void ArgmaxRows(DType dt, const void* logits, uint32_t* ids, int64_t r0, int64_t r1, int64_t n) {
  visit_float(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t r = r0; r < r1; ++r) ids[r] = ArgmaxRow(static_cast<const T*>(logits) + r * n, n);
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>

#include "core/ops/core_params.h"
#include "cpu/kernels.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(ArgmaxRows);

void add_argmax(KernelTable& k) {
  k.add(ops::argmax_rows, [](const ArgmaxRowsParams& p, TensorMap& t) {
    check(p.n <= std::numeric_limits<int32_t>::max(), "cpu backend: argmax_rows needs n < 2^31 (lane indices)");
    const Tensor& logits = tensor(t, "logits");
    uint32_t* ids = tensor(t, "ids").as<uint32_t>();
    parallel_for(p.m, std::max<int64_t>(1, 65536 / p.n), [&](int64_t r0, int64_t r1) {
      HWY_DYNAMIC_DISPATCH(ArgmaxRows)(logits.dtype(), logits.data(), ids, r0, r1, p.n);
    });
  });
}

}  // namespace ts::cpu
#endif
