// touchstone judge: outputs another program produced, judged by the matrix's own judge. A correct set
// passes, one wrong element fails with the report a failing conformance case prints, the elements an op
// leaves unwritten are not compared, and a wrong set of outputs (a name missing or extra, a dtype or
// shape not the declared one) is one line and exit 1.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/case_file.h"
#include "core/safetensors.h"
#include "tests/run_cli.h"
#include "tests/temp_path.h"

namespace {

namespace fs = std::filesystem;
using ts::test::run_cli;

// A generated case and the reference's outputs for it, as `touchstone run` writes them.
struct CaseAndOutputs {
  std::string case_path, outputs_path;
};

CaseAndOutputs make(const std::string& op, const std::string& case_name, const std::string& tag) {
  CaseAndOutputs f{ts::test::temp_path(tag + ".case.safetensors").string(),
                   ts::test::temp_path(tag + ".outputs.safetensors").string()};
  EXPECT_EQ(run_cli("gen " + op + " " + case_name + " --out " + f.case_path).exit_code, 0);
  EXPECT_EQ(run_cli("run " + f.case_path + " --backend reference --out " + f.outputs_path).exit_code, 0);
  return f;
}

// Rewrites the outputs file through `edit`, under a new name.
template <class F> std::string edited(const std::string& path, const std::string& tag, F edit) {
  ts::SafetensorsFile f = ts::read_safetensors(path);
  edit(f);
  const std::string out = ts::test::temp_path(tag + ".safetensors").string();
  ts::write_safetensors(out, f);
  return out;
}

bool one_line(const std::string& s) { return std::count(s.begin(), s.end(), '\n') == 1; }

TEST(JudgeCli, ReferenceOutputsPassWithTheMatrixReport) {
  const auto f = make("rms_norm", "t3_d257_large", "judge_pass");
  const auto r = run_cli("judge " + f.case_path + " " + f.outputs_path);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The report's first line is the matrix's, with the producer in place of the backend.
  EXPECT_EQ(r.out.rfind("outputs=" + f.outputs_path + " op=rms_norm case=judge_pass.case dtype=F32 seed=", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("  params: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok   max_abs="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tolerance: atol="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("row norm over 257"), std::string::npos) << "the derivation is printed: " << r.out;
  EXPECT_NE(r.out.find("\nPASS\n"), std::string::npos) << r.out;
}

TEST(JudgeCli, OneWrongElementFailsAndIsNamed) {
  const auto f = make("rms_norm", "t3_d257_large", "judge_wrong");
  const std::string bad = edited(f.outputs_path, "judge_wrong.bad", [](ts::SafetensorsFile& o) {
    ts::Tensor& t = o.tensors.at("out");
    t.set(300, t.get(300) * 1.001);  // 0.1 %: far outside a row norm's bound, far inside any "looks right"
  });
  const auto r = run_cli("judge " + f.case_path + " " + bad);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL max_abs="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad=1/771 worst[300]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nFAIL\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << "a failing judgement is a report, not an error: " << r.err;
}

TEST(JudgeCli, NanWhereTheReferenceIsFiniteFails) {
  const auto f = make("rms_norm", "t2_d33", "judge_nan");
  const std::string bad = edited(f.outputs_path, "judge_nan.bad", [](ts::SafetensorsFile& o) {
    o.tensors.at("out").set(0, std::numeric_limits<double>::quiet_NaN());
  });
  const auto r = run_cli("judge " + f.case_path + " " + bad);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("worst[0]: got nan"), std::string::npos) << r.out;
}

TEST(JudgeCli, UnwrittenElementsAreNotCompared) {
  // compute_ids_tpe leaves ids[e, j] for j >= tpe[e] unwritten: garbage there passes, a wrong written
  // id fails. The op's own mask, as the matrix applies it.
  const auto f = make("compute_ids_tpe", "b7_e64_k6", "judge_mask");
  const ts::SafetensorsFile ref = ts::read_safetensors(f.outputs_path);
  const int32_t* tpe = ref.tensors.at("tpe").as<int32_t>();
  const int64_t row = ref.tensors.at("ids").shape()[1];
  int64_t unwritten = -1, written = -1;
  for (int64_t e = 0; e < ref.tensors.at("tpe").numel(); ++e) {
    if (tpe[e] < row && unwritten < 0) unwritten = e * row + tpe[e];
    if (tpe[e] > 0 && written < 0) written = e * row;
  }
  ASSERT_GE(unwritten, 0);
  ASSERT_GE(written, 0);
  const std::string garbage = edited(f.outputs_path, "judge_mask.garbage", [&](ts::SafetensorsFile& o) {
    o.tensors.at("ids").as<int32_t>()[unwritten] = -12345;
  });
  EXPECT_EQ(run_cli("judge " + f.case_path + " " + garbage).exit_code, 0);
  const std::string wrong = edited(f.outputs_path, "judge_mask.wrong", [&](ts::SafetensorsFile& o) {
    o.tensors.at("ids").as<int32_t>()[written] += 1;
  });
  const auto r = run_cli("judge " + f.case_path + " " + wrong);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("worst[" + std::to_string(written) + "]"), std::string::npos) << r.out;
}

TEST(JudgeCli, EachOutputHasItsOwnTolerance) {
  // FlashAttention-2's form: `out` and its `lse` are judged by different bounds, each printed.
  const auto f = make("paged_varlen_attention_fa2_ffi", "mixed3_bs16_gqa4_hd128", "judge_tol");
  const auto r = run_cli("judge " + f.case_path + " " + f.outputs_path);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const size_t out = r.out.find("\n  out "), lse = r.out.find("\n  lse ");
  ASSERT_NE(out, std::string::npos) << r.out;
  ASSERT_NE(lse, std::string::npos) << r.out;
  const auto tolerance_after = [&](size_t at) {
    const size_t t = r.out.find("tolerance: ", at);
    return r.out.substr(t, r.out.find('\n', t) - t);
  };
  EXPECT_NE(tolerance_after(out), tolerance_after(lse)) << r.out;
}

TEST(JudgeCli, CaseWithoutExpectedIsJudgedAgainstTheReference) {
  const auto f = make("rms_norm", "t3_d7", "judge_noexp");
  const std::string bare = edited(f.case_path, "judge_noexp.bare", [](ts::SafetensorsFile& c) {
    for (auto it = c.tensors.begin(); it != c.tensors.end();)
      it = it->first.rfind("expected.", 0) == 0 ? c.tensors.erase(it) : std::next(it);
  });
  const auto r = run_cli("judge " + bare + " " + f.outputs_path);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("against: the reference"), std::string::npos) << r.out;
}

TEST(JudgeCli, WrongOutputSetsAreOneLineAndExit1) {
  const auto f = make("rms_norm", "t2_d33", "judge_bad");
  const auto other = make("gelu", "len7", "judge_bad_other");
  struct Bad {
    std::string outputs, message;
  };
  const std::vector<Bad> bad = {
      {edited(f.outputs_path, "bad.missing", [](ts::SafetensorsFile& o) { o.tensors.erase("out"); }),
       "output 'out' of rms_norm is missing"},
      {edited(f.outputs_path, "bad.extra",
              [](ts::SafetensorsFile& o) { o.tensors.emplace("out2", ts::Tensor(ts::DType::F32, {1})); }),
       "'out2' is not an output of rms_norm (its outputs: out)"},
      {edited(f.outputs_path, "bad.dtype",
              [](ts::SafetensorsFile& o) { o.tensors.at("out") = ts::Tensor(ts::DType::F16, {2, 33}); }),
       "output 'out' is F16, but rms_norm declares it F32"},
      {edited(f.outputs_path, "bad.shape",
              [](ts::SafetensorsFile& o) { o.tensors.at("out") = ts::Tensor(ts::DType::F32, {33, 2}); }),
       "output 'out' has shape [33,2], but this case's is [2,33]"},
      {other.outputs_path, "holds outputs of gelu, but"},
      {ts::test::temp_path("no-such-file").string(), "no-such-file"},
  };
  for (const auto& b : bad) {
    const auto r = run_cli("judge " + f.case_path + " " + b.outputs);
    EXPECT_EQ(r.exit_code, 1) << b.message;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "no report for bad outputs: " << r.out;
  }
  for (const std::string& args : std::vector<std::string>{"judge", "judge " + f.case_path, "judge a b c"}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_TRUE(one_line(r.err)) << r.err;
  }
}

}  // namespace
