#pragma once
// The int8 activation route's tolerance: activations quantized per block to int8 on the fly (d =
// amax / 127), the products summed exactly in integers. The bound is an NMSE over the outputs,
// derived in core/quant/int8_route.cpp from the case's own activations; cpu's quant GEMVs and the
// GPU decode GEMVs state it alike.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/dtype.h"
#include "core/metrics.h"
#include "core/tensor.h"

namespace ts {

// The fewest outputs an int8 product may have: its bound is an NMSE, which needs enough outputs to
// average over (a single output near zero by chance would make any relative bound fail). Fewer take
// the exact route.
inline constexpr int64_t kMinInt8Outputs = 64;

// How far the int8 route's activations stand from their blocks' peaks, read from the case: over the
// activation rows starting at `starts` (k values each, of `a`), the largest of each row's
// sum_b B amax_b^2 / sum a^2, for blocks of B = `block` values (0: the whole row as one block, a bound
// for any grouping of its values). Rows of zeros add nothing. Nullopt when a value is not finite: the
// kernels then take the exact route and the op's tolerance holds.
std::optional<double> activation_peak_ratio(const Tensor& a, const std::vector<int64_t>& starts, int64_t k,
                                            int64_t block);
// The starts of a dense [m, k] activation tensor's rows.
std::vector<int64_t> dense_rows(int64_t m, int64_t k);
// The int8 path's own tolerance (an NMSE bound, derived in core/quant/int8_route.cpp) for activations whose
// peak ratio (activation_peak_ratio) is `ratio`; `blocks` names their quantization blocks for the
// derivation ("32", "256", "32 sorted rows").
Tolerance int8_tolerance(double ratio, const char* blocks, DType out);

}  // namespace ts
