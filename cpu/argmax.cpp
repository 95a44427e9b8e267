// argmax_rows: ids[r] = the first index of the maximum of logits row r. Rows split across threads;
// each row is widened to F32 in chunks (exact for every dtype, so ties stay ties).
#include <algorithm>

#include "core/ops/core_params.h"
#include "cpu/common.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/thread_pool.h"

namespace ts::cpu {

void add_argmax(KernelTable& k) {
  k.add<ArgmaxRowsParams>("argmax_rows", [](const ArgmaxRowsParams& p, TensorMap& t) {
    const Tensor& logits = tensor(t, "logits");
    uint32_t* ids = tensor(t, "ids").as<uint32_t>();
    const size_t es = dtype_size(logits.dtype());
    parallel_for(p.m, std::max<int64_t>(1, 65536 / p.n), [&](int64_t r0, int64_t r1) {
      constexpr int64_t kChunk = 1024;
      float buf[kChunk];
      for (int64_t r = r0; r < r1; ++r) {
        float best = 0;
        int64_t best_i = 0;
        for (int64_t c0 = 0; c0 < p.n; c0 += kChunk) {
          const int64_t len = std::min(kChunk, p.n - c0);
          to_f32(logits.dtype(), logits.data() + (r * p.n + c0) * es, buf, len);
          for (int64_t i = 0; i < len; ++i)
            if ((c0 == 0 && i == 0) || buf[i] > best) best = buf[i], best_i = c0 + i;  // strict: first max wins
        }
        ids[r] = static_cast<uint32_t>(best_i);
      }
    });
  });
}

}  // namespace ts::cpu
