// Bad input to the quant family's GEMMs: every malformed case is one line naming the tensor or
// parameter and what was expected (the catalog, "Bad input" of the quant family). And gemm_quant_fused is exactly its
// parts: on every backend, each part's columns equal, bit for bit, that backend's gemm_quant of the part.
#include <iostream>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/ops/quant_params.h"
#include "tests/expect_error.h"

namespace ts {
namespace {

// A valid generated case of `op` as a file, for tests to break one thing of.
SafetensorsFile valid_file(const std::string& op, const Params& p) {
  const Case c = generate_case(op_or_throw(op), p, DType::F32, 1);
  return case_to_file(*c.op, c.params, c.tensors, {}, c.seed);
}

TEST(QuantGemmValidation, GgufWeightRows) {
  SafetensorsFile f = valid_file("gemm_quant", Params::of(GemmQuantParams{QuantKind::Q5_K, 2, 3, 512}));
  EXPECT_NO_THROW(case_from_file(f));
  f.tensors["weight"] = Tensor(DType::U8, {3, 350});
  expect_error([&] { case_from_file(f); }, "tensor 'weight': rows of 350 bytes, expected 352 (512 Q5_K values = 2 blocks of 176 bytes)");
  f.metadata["n_cols"] = "500";
  expect_error([&] { case_from_file(f); }, "parameter 'n_cols': 500 is not a positive multiple of Q5_K's block of 256 values");
  f.metadata["n_cols"] = "512";
  f.metadata["kind"] = "BF16";
  expect_error([&] { case_from_file(f); }, "parameter 'kind': BF16 is not a GGUF block kind");
}

TEST(QuantGemmValidation, FusedParts) {
  GemmQuantFusedParams p;
  p.m = 1, p.n_cols = 256, p.kind[0] = QuantKind::Q4_K, p.kind[1] = QuantKind::Q8_0, p.n_rows[0] = 2, p.n_rows[1] = 3;
  SafetensorsFile f = valid_file("gemm_quant_fused", Params::of(p));
  EXPECT_NO_THROW(case_from_file(f));
  f.tensors["weight.1"] = Tensor(DType::U8, {3, 144});
  expect_error([&] { case_from_file(f); }, "tensor 'weight.1': rows of 144 bytes, expected 272 (256 Q8_0 values = 8 blocks of 34 bytes)");
  f.tensors.erase("weight.1");
  expect_error([&] { case_from_file(f); }, "weight.1");
  SafetensorsFile g = valid_file("gemm_quant_fused", Params::of(p));
  g.metadata["kind.2"] = "Q6_K";  // a kind without its rows
  expect_error([&] { case_from_file(g); }, "unknown parameter 'kind.2'");
  g.metadata.erase("kind.2");
  g.metadata["n_rows.2"] = "4";  // rows without their kind
  expect_error([&] { case_from_file(g); }, "missing parameter 'kind.2'");
}

TEST(QuantGemmValidation, Gptq) {
  const GptqParams p{4, 32, 1, 128, 16, true};
  SafetensorsFile f = valid_file("gemm_gptq", Params::of(p));
  EXPECT_NO_THROW(case_from_file(f));
  SafetensorsFile bad = f;
  bad.metadata["bits"] = "3";
  expect_error([&] { case_from_file(bad); }, "parameter 'bits' must be 4 or 8, is 3");
  bad = f;
  bad.metadata["group_size"] = "48";
  expect_error([&] { case_from_file(bad); }, "parameter 'group_size': 48 does not divide k = 128");
  bad = f;
  bad.tensors["g_idx"].as<int32_t>()[77] = 4;
  expect_error([&] { case_from_file(bad); }, "tensor 'g_idx': element 77 is 4, outside [0, 4)");
  bad.tensors["g_idx"].as<int32_t>()[77] = -1;
  expect_error([&] { case_from_file(bad); }, "tensor 'g_idx': element 77 is -1, outside [0, 4)");
  bad = f;
  bad.tensors["qzeros"] = Tensor(DType::I32, {4, 16});
  expect_error([&] { case_from_file(bad); }, "tensor 'qzeros' has shape [4,16], the parameters need [4,2]");
  bad = f;
  bad.tensors["scales"] = Tensor(DType::F16, {2, 16});
  expect_error([&] { case_from_file(bad); }, "tensor 'scales' has shape [2,16], the parameters need [4,16]");
  bad = f;
  bad.tensors["scales"] = Tensor(DType::F32, {4, 16});
  expect_error([&] { case_from_file(bad); }, "tensor 'scales' has dtype F32, expected F16");
  bad = f;
  bad.tensors.erase("g_idx");
  expect_error([&] { case_from_file(bad); }, "g_idx");
}

TEST(QuantGemmValidation, Awq) {
  SafetensorsFile f = valid_file("gemm_awq", Params::of(AwqParams{4, 64, 2, 128, 24}));
  EXPECT_NO_THROW(case_from_file(f));
  SafetensorsFile bad = f;
  bad.metadata["bits"] = "8";
  expect_error([&] { case_from_file(bad); }, "parameter 'bits' must be 4 (AutoAWQ's GEMM format), is 8");
  bad = f;
  bad.metadata["group_size"] = "96";
  expect_error([&] { case_from_file(bad); }, "parameter 'group_size': 96 does not divide k = 128");
  bad = f;
  bad.tensors["qweight"] = Tensor(DType::I32, {128, 24});
  expect_error([&] { case_from_file(bad); }, "tensor 'qweight' has shape [128,24], the parameters need [128,3]");
}

class QuantFusedOn : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantFusedOn, PartsAreGemmQuantSideBySide) {
  Backend& b = backend(GetParam());
  if (!b.availability().ok) GTEST_SKIP() << GetParam() << " unavailable";
  const Op& fused = op_or_throw("gemm_quant_fused");
  std::string not_judged;
  int judged = 0;
  for (const CaseSpec& spec : fused.cases()) {
    const Case c = generate_case(fused, spec.params, DType::F32, 9);
    if (const Support s = b.supports(c); !s.ok) {
      not_judged += " " + spec.name + " (" + s.reason + ")";
      continue;
    }
    const auto& p = c.params.as<GemmQuantFusedParams>();
    TensorMap io = working_set(c);
    run_case(b, *c.op, c.params, io);
    const float* out = io.at("out").as<float>();
    int64_t col0 = 0;
    for (int i = 0; i < p.parts(); ++i) {
      const GemmQuantParams part{p.kind[i], p.m, p.n_rows[i], p.n_cols};
      const Case one = generate_case(op_or_throw("gemm_quant"), Params::of(part), DType::F32, 9);
      TensorMap io1 = working_set(one);
      io1.at("a") = c.tensors.at("a");
      io1.at("weight") = c.tensors.at("weight." + std::to_string(i));
      if (const Support s = b.supports(one); !s.ok) {
        not_judged += fmt::format(" {} part {} ({})", spec.name, i, s.reason);
        col0 += p.n_rows[i];
        continue;
      }
      ++judged;
      run_case(b, *one.op, one.params, io1);
      const float* want = io1.at("out").as<float>();
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t j = 0; j < p.n_rows[i]; ++j)
          ASSERT_EQ(out[r * p.total_rows() + col0 + j], want[r * p.n_rows[i] + j])
              << GetParam() << " " << spec.name << " part " << i << " row " << r << " column " << j;
      col0 += p.n_rows[i];
    }
  }
  // Nothing compared is a skip with the reasons, never a silent pass.
  if (judged == 0) GTEST_SKIP() << GetParam() << " compares no part:" << not_judged;
  if (!not_judged.empty()) std::cout << GetParam() << " does not compare:" << not_judged << "\n";
}

INSTANTIATE_TEST_SUITE_P(Backends, QuantFusedOn, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
