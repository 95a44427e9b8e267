// The int8 activation route's error bound, shared by every backend whose quant kernels quantize
// their activations on the fly (cpu's GGUF, GPTQ and MoE GEMVs; the GPU decode GEMVs): the kernels
// and their tolerances agree through these.
#include "core/quant/int8_route.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ts {

// The int8 GEMV's outputs against the exact product. Each activation a moves to d q with
// |a - d q| <= d / 2, d = amax / 127 of its block (32 values, or 256 for the K kinds): an error
// spread uniformly over [-amax / 254, amax / 254], variance amax^2 / (12 * 127^2), independent across
// the k terms. An output sum_c w_c a_c then errs by sum_c w_c e_c, of mean square
// sum_c w_c^2 amax_c^2 / (12 * 127^2) against the output's own sum_c w_c^2 sigma^2 for N(0, sigma)
// activations: the NMSE is about (amax / sigma)^2 / (12 * 127^2). The generators' activations are
// N(0, 1). A block of 32 has its amax below 5 sigma (a chance of 32 * 5.7e-7 = 1.8e-5 per block to
// exceed it): 25 / 193548 = 1.3e-4. A block of 256 is held to the same confidence at 5.5 sigma
// (256 * 3.8e-8 = 9.7e-6 per block): 30.25 / 193548 = 1.6e-4. With 64 outputs or more (int8_gguf on cpu, the Vulkan decode GEMV's route alike)
// the measured ratio of the two mean squares stays within a factor 4 of its expectation (an
// F(64, 64) ratio exceeds 4 with a chance below 1e-7), so the bound is 4x that, plus the output's
// own rounding (2 u_out)^2. The weights are decoded exactly, the products summed exactly in int32
// and scaled in F32, whose error is orders of magnitude below. A fused call with any K part takes
// the 256 bound (the NMSE over all its outputs is a mix of the two).
//
// The ratio E[d^2] / E[a^2] that the analysis needs is read from the case's own activations
// (activation_peak_ratio: per row, sum_b B amax_b^2 / sum a^2, the largest over the rows used, so that
// any mix of rows in the NMSE stays below it), not assumed from the generators' N(0, 1): a user's
// activations with outliers get the looser bound their blocks call for. The figures above are what
// N(0, 1) data gives (about 6-7 for its typical blocks, 25 and 30 at its rare worst).
Tolerance int8_tolerance(double ratio, const char* blocks, DType out) {
  const double quantum = ratio / (12.0 * 127.0 * 127.0);
  const double rounding = 4 * unit_roundoff(out) * unit_roundoff(out);
  return Tolerance{.why = fmt::format("activations quantized to int8 per {} (d = amax/127): NMSE ~ E[d^2]/(12 E[a^2]) "
                                      "= sum_b B amax_b^2 / (12*127^2 sum a^2), {:.3g} from this case's activation "
                                      "rows (the largest row's), x4 for the spread over >= 64 outputs, + output rounding",
                                      blocks, ratio),
                   .metric = Metric::Nmse,
                   .max_nmse = 4 * quantum + rounding};
}

std::optional<double> activation_peak_ratio(const Tensor& a, const std::vector<int64_t>& starts, int64_t k,
                                            int64_t block) {
  const int64_t b = block > 0 ? block : k;
  double worst = 0;
  for (int64_t s : starts) {
    double energy = 0, peaks = 0;
    for (int64_t c0 = 0; c0 < k; c0 += b) {
      double amax = 0;
      for (int64_t c = c0; c < std::min(k, c0 + b); ++c) {
        const double v = a.get(s + c);
        if (!std::isfinite(v)) return std::nullopt;
        amax = std::max(amax, std::fabs(v));
        energy += v * v;
      }
      peaks += static_cast<double>(std::min(b, k - c0)) * amax * amax;
    }
    if (energy > 0) worst = std::max(worst, peaks / energy);
  }
  return worst;
}

std::vector<int64_t> dense_rows(int64_t m, int64_t k) {
  std::vector<int64_t> s(static_cast<size_t>(std::max<int64_t>(m, 0)));
  for (int64_t i = 0; i < m; ++i) s[static_cast<size_t>(i)] = i * k;
  return s;
}

}  // namespace ts
