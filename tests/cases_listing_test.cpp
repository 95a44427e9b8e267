// `touchstone cases` lists, for each enum parameter, only the values the op takes: gemm_quant and
// dequantize name the GGUF kinds and not the plain F32 / F16 / BF16 their `kind` can spell, and the
// moe ops over plain expert stacks keep them.
#include <string>

#include <gtest/gtest.h>

#include "tests/run_cli.h"

namespace ts {
namespace {

std::string params_line(const std::string& op) {
  const auto r = test::run_cli("cases --op " + op);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const size_t at = r.out.find("  params: ");
  EXPECT_NE(at, std::string::npos) << r.out;
  return r.out.substr(at, r.out.find('\n', at) - at);
}

TEST(CasesListing, EnumsListOnlyTheValuesTheOpTakes) {
  for (const char* op : {"gemm_quant", "dequantize"}) {
    const std::string line = params_line(op);
    EXPECT_NE(line.find("kind=Q4_0|Q4_1|Q8_0|Q4_K|Q5_K|Q6_K "), std::string::npos) << op << ": " << line;
    EXPECT_EQ(line.find("F32"), std::string::npos) << op << ": " << line;
  }
  EXPECT_NE(params_line("kv_append_paged").find("kv_dtype=F16|BF16|F8_E4M3|I8 "), std::string::npos);
  EXPECT_NE(params_line("gemv_quant_moe_id").find("F32|F16|BF16"), std::string::npos);  // plain expert stacks
}

}  // namespace
}  // namespace ts
