// The OpenCL attention engine's key split on the paged and kv families. On PoCL the device rule splits
// only when the work-groups are few, so most ci cases never take the split path; here every smoke and
// ci case in F32 runs with the keys forced into pieces of 16 (TOUCHSTONE_OPENCL_ATTN_PIECE, read at
// plan time), so flash_combine's merge is judged on every paged layout, on ragged batches and tile
// lists, on quantized pools and on _fa2_ffi's lse. The programs are the matrix's own (the piece is a
// launch argument): no extra kernel builds.
#include <algorithm>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"

namespace ts {
namespace {

class OpenclPagedSplit : public ::testing::TestWithParam<const char*> {};

// Sets the piece for this test only.
struct PieceOverride {
  explicit PieceOverride(const char* n) { setenv("TOUCHSTONE_OPENCL_ATTN_PIECE", n, 1); }
  ~PieceOverride() { unsetenv("TOUCHSTONE_OPENCL_ATTN_PIECE"); }
};

TEST_P(OpenclPagedSplit, EveryCaseWithKeysInPiecesOf16) {
  Backend* b = find_backend("opencl");
  if (!b) GTEST_SKIP() << "no opencl backend in this build";
  const Availability a = b->availability();
  if (!a.ok) GTEST_SKIP() << "opencl unavailable: " << a.detail;
  const Op& op = op_or_throw(GetParam());
  const PieceOverride piece("16");
  int ran = 0;
  for (const CaseSpec& spec : op.cases()) {
    // vLLM's x = 8 cases are F16 / BF16 only (16 bytes of elements).
    const bool f32 =
        spec.dtypes.empty() || std::find(spec.dtypes.begin(), spec.dtypes.end(), DType::F32) != spec.dtypes.end();
    if (spec.tier == Tier::Full || !f32) continue;
    const Problem pr = make_problem(op, spec.params, DType::F32);
    const Support s = b->supports(pr);
    ASSERT_TRUE(s.ok) << spec.name << ": " << s.reason;
    const Verdict v = check_case(*b, generate_case(pr, 7), false);
    EXPECT_TRUE(v.pass) << op.name() << "." << spec.name << "\n" << v.describe(true);
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, OpenclPagedSplit,
                         ::testing::Values("paged_decode_attention", "paged_varlen_attention",
                                           "paged_varlen_attention_vllm", "paged_varlen_attention_vllm_layout",
                                           "paged_varlen_attention_vllm_tiled_q4", "paged_varlen_attention_fa2_ffi",
                                           "paged_batched_decode_attention", "kv_paged_decode_attention"));

}  // namespace
}  // namespace ts
