// kv_append_paged's quantized pools (I8, F8_E4M3) given rows that hold a NaN or an Inf, on every
// backend: each such row stores the scale 0x7fc00000 (a quiet NaN) and codes that are all 0, as
// core/ops/kv/kv_quant.h defines it, and every other row what it stores without them. The judge
// compares the pools exactly against the reference; the bits of the scales and codes are checked here
// too, since the judge takes any NaN for any other.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged_params.h"
#include "tests/available_backend.h"

namespace ts {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const CaseSpec& preset(const Op& op, const std::string& name) {
  for (const CaseSpec& c : op.cases())
    if (c.name == name) return c;
  throw Error("no preset " + name);
}

// Rows 0 .. 4 of each side non-finite (a NaN inside, +Inf in the last element, -Inf, NaN beside Inf,
// all NaN), row 5 finite with an element near the F32 maximum; the rest as generated.
void poison_rows(float* x, int64_t hd, int shift) {
  auto row = [&](int r) { return x + ((r + shift) % 5) * hd; };
  row(0)[3] = kNaN;
  row(1)[hd - 1] = kInf;
  row(2)[hd / 2] = -kInf;
  row(3)[0] = kNaN, row(3)[1] = kInf;
  for (int64_t i = 0; i < hd; ++i) row(4)[i] = kNaN;
  x[5 * hd + 5] = 3e38f;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class KvNonFinite : public ::testing::TestWithParam<std::string> {};

TEST_P(KvNonFinite, RowsWithNaNOrInfStoreTheNaNScaleAndZeroCodes) {
  Backend* b = test::available_backend(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " unavailable here";
  const Op& op = op_or_throw("kv_append_paged");
  for (const char* kind : {"I8", "F8_E4M3"}) {
    SCOPED_TRACE(kind);
    const CaseSpec& spec = preset(op, std::string(kind) + "_chunk5_after30_bs16_hd128");
    const auto& p = spec.params.as<KvAppendPagedParams>();
    Case c = generate_case(op, spec.params, DType::F32, 7);
    poison_rows(c.tensors.at("k_in").as<float>(), p.head_dim, 0);
    poison_rows(c.tensors.at("v_in").as<float>(), p.head_dim, 2);
    TensorMap want = c.tensors;
    run_case(backend("reference"), op, spec.params, want);
    for (auto& [name, t] : c.expected) t = want.at(name);
    const Support sup = b->supports(c);
    if (!sup.ok) GTEST_SKIP() << GetParam() << ": " << sup.reason;
    const Verdict v = check_case(*b, c, false);
    EXPECT_TRUE(v.pass) << v.describe();

    TensorMap got = working_set(c);
    run_case(*b, c, got);
    const uint32_t* idx = c.tensors.at("paged_block_indices").as<uint32_t>();
    for (const char* side : {"k", "v"}) {
      const float* x = c.tensors.at(std::string(side) + "_in").as<float>();
      const float* scales = got.at(std::string("layer_") + side + "_scales").as<float>();
      const uint8_t* codes = got.at(std::string("layer_") + side).as<uint8_t>();
      for (int64_t row = 0; row < p.tokens * p.num_kv_heads; ++row) {
        bool finite = true;
        for (int64_t i = 0; i < p.head_dim; ++i) finite = finite && std::isfinite(x[row * p.head_dim + i]);
        const int64_t tok = row / p.num_kv_heads, h = row % p.num_kv_heads, pos = p.cache_len_before + tok;
        const int64_t at = (int64_t{idx[pos / p.block_size]} * p.num_kv_heads + h) * p.block_size + pos % p.block_size;
        if (finite) {
          EXPECT_TRUE(std::isfinite(scales[at])) << side << " row " << row;
          continue;
        }
        EXPECT_EQ(bits(scales[at]), kvq::kNonFiniteScaleBits) << side << " row " << row << ": scale " << scales[at];
        int nonzero = 0;
        for (int64_t i = 0; i < p.head_dim; ++i) nonzero += codes[at * p.head_dim + i] != 0;
        EXPECT_EQ(nonzero, 0) << side << " row " << row << ": codes not all 0";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, KvNonFinite, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
