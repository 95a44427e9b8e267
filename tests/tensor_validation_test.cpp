// The tensor family's bad input: one line naming the parameter, before any kernel runs, through
// Op::parse, case_from_file and the CLI (exit 1). Each test loads the good case first, so a check
// that rejects everything cannot pass.
#include <algorithm>
#include <filesystem>
#include <tuple>
#include <string>

#include <gtest/gtest.h>

#include "core/case_file.h"
#include "core/op.h"
#include "core/safetensors.h"
#include "tests/expect_error.h"
#include "tests/good_case.h"
#include "tests/run_cli.h"
#include "tests/temp_path.h"

namespace ts {
namespace {

const ParamMap kBroadcast = {{"d0", "2"}, {"d1", "3"}, {"d2", "5"}, {"e0", "1"}, {"e1", "3"}, {"e2", "1"}};

TEST(TensorValidation, BroadcastAxisNeitherOneNorD) {
  for (const std::string op : {"add", "mul"}) {
    good_case(op, kBroadcast);
    // e0 = 3 against d0 = 2, e1 = 2 against d1 = 3, e2 = 4 against d2 = 5.
    for (const auto& [e, d, bad] : {std::tuple{"e0", "d0", "3"}, {"e1", "d1", "2"}, {"e2", "d2", "4"}}) {
      ParamMap m = kBroadcast;
      m[e] = bad;
      expect_error([&] { op_or_throw(op).parse(m); }, fmt::format("parameter '{}' must be 1 or {}", e, d));
    }
  }
}

TEST(TensorValidation, RotaryDimOddOrPastHeadDim) {
  const ParamMap m = {{"seq", "3"}, {"heads", "2"}, {"head_dim", "8"}, {"base", "10000"}, {"rotary_dim", "4"}};
  good_case("apply_rope_partial", m);
  for (const char* bad : {"3", "10", "0"}) {
    ParamMap b = m;
    b["rotary_dim"] = bad;
    expect_error([&] { op_or_throw("apply_rope_partial").parse(b); }, "parameter 'rotary_dim' must be even");
  }
  ParamMap odd = {{"seq", "3"}, {"heads", "2"}, {"head_dim", "7"}, {"base", "10000"}};
  expect_error([&] { op_or_throw("apply_rope_positions").parse(odd); }, "parameter 'head_dim' must be even");
  odd["head_dim"] = "8";
  odd["base"] = "-1";
  expect_error([&] { op_or_throw("apply_rope_positions").parse(odd); }, "parameter 'base' must be positive");
}

TEST(TensorValidation, PositionPast2To24) {
  for (const std::string op : {"apply_rope_positions", "apply_rope_partial"}) {
    ParamMap m = {{"seq", "3"}, {"heads", "2"}, {"head_dim", "8"}, {"base", "10000"}};
    if (op == "apply_rope_partial") m["rotary_dim"] = "4";
    SafetensorsFile f = good_case(op, m);
    f.tensors["positions"].as<uint32_t>()[0] = (1u << 24) - 1;  // the largest allowed
    EXPECT_NO_THROW(case_from_file(f)) << op;
    f.tensors["positions"].as<uint32_t>()[2] = 1u << 24;
    expect_error([&] { case_from_file(f); }, "positions[2] = 16777216 is 2^24 or more");
  }
}

TEST(TensorValidation, GqaHeadsAndCausalLengths) {
  const ParamMap m = {{"seq_q", "3"},        {"seq_kv", "5"},   {"num_heads", "8"},
                      {"num_kv_heads", "2"}, {"head_dim", "8"}, {"causal", "true"}};
  good_case("gqa_attention", m);
  ParamMap b = m;
  b["num_kv_heads"] = "3";
  expect_error([&] { op_or_throw("gqa_attention").parse(b); }, "num_heads = 8 is not a multiple of num_kv_heads = 3");
  b = m;
  b["seq_q"] = "6";
  expect_error([&] { op_or_throw("gqa_attention").parse(b); }, "parameter 'seq_q' = 6 must not exceed seq_kv = 5");
  b["causal"] = "false";  // without causality more queries than keys is defined
  good_case("gqa_attention", b);
}

// Through the CLI: a case file whose metadata breaks one rule exits 1 with one line naming it.
TEST(TensorValidation, CliExitsOneWithOneLine) {
  namespace fs = std::filesystem;
  const fs::path dir = test::temp_path("tensor_validation");
  fs::create_directories(dir);
  struct Bad {
    std::string op;
    ParamMap good;
    std::string key, value, needle;
  };
  const std::vector<Bad> bad = {
      {"add", kBroadcast, "e2", "4", "parameter 'e2' must be 1 or d2"},
      {"apply_rope_partial",
       {{"seq", "2"}, {"heads", "1"}, {"head_dim", "8"}, {"base", "10000"}, {"rotary_dim", "4"}},
       "rotary_dim",
       "9",
       "parameter 'rotary_dim' must be even"},
      {"gqa_attention",
       {{"seq_q", "2"},
        {"seq_kv", "2"},
        {"num_heads", "4"},
        {"num_kv_heads", "4"},
        {"head_dim", "8"},
        {"causal", "true"}},
       "seq_q",
       "3",
       "parameter 'seq_q' = 3 must not exceed seq_kv = 2"},
  };
  for (const Bad& b : bad) {
    SafetensorsFile f = good_case(b.op, b.good);
    f.metadata[b.key] = b.value;
    const fs::path in = dir / (b.op + ".safetensors");
    write_safetensors(in.string(), f);
    const std::string out = (dir / "out.safetensors").string();
    const auto r = test::run_cli("run " + in.string() + " --backend reference --out " + out);
    EXPECT_EQ(r.exit_code, 1) << b.op << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << b.op << ": " << r.err;
    EXPECT_NE(r.err.find(b.needle), std::string::npos) << b.op << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir / "out.safetensors")) << b.op;
  }
  // A position past 2^24 - 1: a check on the tensor's values, before any kernel.
  SafetensorsFile f =
      good_case("apply_rope_positions", {{"seq", "2"}, {"heads", "1"}, {"head_dim", "8"}, {"base", "10000"}});
  f.tensors["positions"].as<uint32_t>()[1] = 1u << 24;
  const fs::path in = dir / "positions.safetensors";
  write_safetensors(in.string(), f);
  const std::string out = (dir / "out.safetensors").string();
  const auto r = test::run_cli("run " + in.string() + " --backend reference --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("positions[1] = 16777216 is 2^24 or more"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.safetensors"));
}

}  // namespace
}  // namespace ts
