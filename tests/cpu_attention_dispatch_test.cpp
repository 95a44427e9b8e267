// The cpu attention engine's per-dtype dispatch (cpu/attention/attention_kernels.h): a K/V dtype with no kernel
// is refused with its name, never read as another type's elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/attention/attention_kernels.h"

namespace ts::cpu {
namespace {

TEST(CpuAttentionDispatch, KvDtypeWithoutKernelFailsWithItsName) {
  const int64_t hd = 8;
  std::vector<uint32_t> k(hd, 0), v(hd, 0);
  std::vector<float> q(hd, 1.0f), m(1, -std::numeric_limits<float>::infinity()), l(1, 0.0f), acc(hd, 0.0f);
  const float* rows[] = {q.data()};
  const int64_t lo[] = {0}, hi[] = {1};
  const KvView kv{k.data(), hd, nullptr, 0, v.data(), hd, hd, 0, hd};
  const AttnBlock blk{rows, lo, hi, 1};
  const AttnTask task{0, 1, m.data(), l.data(), acc.data()};
  try {
    attend(DType::U32, task, blk, kv, 1.0f);
    FAIL() << "U32 K/V were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("U32"), std::string::npos) << e.what();
  }
  EXPECT_EQ(l[0], 0.0f);  // nothing was accumulated
}

}  // namespace
}  // namespace ts::cpu
