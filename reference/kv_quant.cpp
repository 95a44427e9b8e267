// The KV pools' quantizer (core/ops/kv/kv_quant.h): what a quantized pool holds is part of the truth
// (kv_append_paged's reference writes it, and every generated pool is filled through it), so it is
// compiled with the reference, without FMA contraction or fast-math: the same bits on every machine.
#include "core/ops/kv/kv_quant.h"

#include <algorithm>
#include <cmath>

namespace ts::kvq {

float store_row(KvDtype k, const float* x, int64_t n, Tensor& pool, int64_t first) {
  if (!has_scales(k)) {
    for (int64_t i = 0; i < n; ++i) pool.set(first + i, x[i]);
    return 0.0f;
  }
  float amax = 0.0f;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) finite = false;
    else amax = std::max(amax, std::fabs(x[i]));
  }
  if (!finite) {  // no finite scale stands for the row: it loads as NaN everywhere (kv_quant.h)
    for (int64_t i = 0; i < n; ++i) pool.as<uint8_t>()[first + i] = 0;
    return kNonFiniteScale;
  }
  const float scale = amax / qmax(k);  // F32, as stored: the codes are x divided by exactly this
  for (int64_t i = 0; i < n; ++i) {
    const float q = scale == 0.0f ? 0.0f : x[i] / scale;
    if (k == KvDtype::I8) {
      // std::round rounds halfway cases away from zero.
      pool.as<int8_t>()[first + i] = static_cast<int8_t>(std::clamp(std::round(q), -127.0f, 127.0f));
    } else {
      pool.as<uint8_t>()[first + i] = f32_to_f8e4m3(q);
    }
  }
  return scale;
}

}  // namespace ts::kvq
