// Bad input is an Error with a message that names the problem, before any kernel runs: through
// Op::parse (parameters), Op::validate (tensors and index values) and case_from_file (a whole case
// file). Each test also runs the good case first, so a check that rejects everything cannot pass.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "core/case_file.h"
#include "tests/good_case.h"
#include "core/op.h"
#include "core/ops/core_params.h"

namespace ts {
namespace {

TEST(OpValidation, UnknownMissingAndMalformedParameters) {
  const Op& op = op_or_throw("rms_norm");
  EXPECT_NO_THROW(op.parse({{"tokens", "2"}, {"dim", "8"}, {"eps", "1e-6"}}));
  expect_error([&] { op.parse({{"tokens", "2"}, {"dim", "8"}, {"eps", "1e-6"}, {"dims", "8"}}); },
               "unknown parameter 'dims'");
  expect_error([&] { op.parse({{"tokens", "2"}, {"eps", "1e-6"}}); }, "missing parameter 'dim'");
  expect_error([&] { op.parse({{"tokens", "2"}, {"dim", "8x"}, {"eps", "1e-6"}}); }, "'8x' is not an integer");
  expect_error([&] { op.parse({{"tokens", "0"}, {"dim", "8"}, {"eps", "1e-6"}}); }, "'tokens' must be positive");
  expect_error([&] { op.parse({{"tokens", "2"}, {"dim", "8"}, {"eps", "-1"}}); }, "'eps' must not be negative");
  expect_error([&] { op_or_throw("rms_nrom"); }, "unknown op 'rms_nrom'");
}

TEST(OpValidation, WrongShapeMissingStrayAndWrongDtypeTensors) {
  const ParamMap m = {{"tokens", "3"}, {"dim", "5"}, {"eps", "1e-6"}};
  const SafetensorsFile good = good_case("rms_norm", m);

  SafetensorsFile f = good;
  f.tensors["x"] = Tensor(DType::F32, {3, 6});
  expect_error([&] { case_from_file(f); }, "tensor 'x' has shape [3,6], the parameters need [3,5]");

  f = good;
  f.tensors.erase("w");
  expect_error([&] { case_from_file(f); }, "missing tensor 'w'");

  f = good;
  f.tensors["bias"] = Tensor(DType::F32, {5});
  expect_error([&] { case_from_file(f); }, "unexpected tensor 'bias'");

  f = good;
  f.tensors["w"] = Tensor(DType::BF16, {5});
  expect_error([&] { case_from_file(f); }, "tensor 'w' has dtype BF16, expected F32");

  f = good;
  f.tensors["expected.out"] = Tensor(DType::F32, {5, 3});
  expect_error([&] { case_from_file(f); }, "expected.out");
}

// vocab (and n) are inferred from the tensors, so these cases are built from typed parameters.
SafetensorsFile embedding_file(const std::string& name) {
  const Op& op = op_or_throw(name);
  Params p;
  if (name == "embedding_lookup") {
    EmbeddingLookupParams e;
    e.dim = 4, e.vocab = 10, e.n = 3;
    p = Params::of(e);
  } else {
    EmbeddingLookupDevParams e;
    e.batch = 3, e.dim = 4, e.vocab = 10;
    p = Params::of(e);
  }
  return case_to_file(op, p, op.make_case(p, DType::F32, 7), {}, 7);
}

TEST(OpValidation, EmbeddingIdOutOfRange) {
  for (const std::string op : {"embedding_lookup", "embedding_lookup_dev"}) {
    SafetensorsFile f = embedding_file(op);
    EXPECT_NO_THROW(case_from_file(f)) << op;
    f.tensors["ids"].as<uint32_t>()[2] = 10;
    expect_error([&] { case_from_file(f); }, "ids[2] = 10 is out of range: must be below vocab = 10");
    f.tensors["ids"].as<uint32_t>()[2] = 0xffffffffu;
    expect_error([&] { case_from_file(f); }, "ids[2] = 4294967295 is out of range");
    f.tensors["ids"] = Tensor(DType::I32, {3});
    expect_error([&] { case_from_file(f); }, "tensor 'ids' has dtype I32, expected U32");
  }
}

TEST(OpValidation, KvCacheOverflow) {
  const Op& op = op_or_throw("kv_cache_append_head_major");
  ParamMap m = {{"cache_len", "9"}, {"cache_capacity", "12"}, {"new_tokens", "3"}, {"nkv", "2"}, {"hd", "4"}};
  good_case(op.name(), m);  // exactly full is fine
  m["cache_len"] = "10";
  expect_error([&] { op.parse(m); }, "cache overflow: cache_len 10 + new_tokens 3 exceeds cache_capacity 12");
  m["cache_len"] = "-1";
  expect_error([&] { op.parse(m); }, "'cache_len' must not be negative");
}

TEST(OpValidation, BatchedCacheLengthAtCapacity) {
  const ParamMap m = {{"capacity", "4"}, {"m", "3"}, {"nkv", "2"}, {"hd", "5"}};
  SafetensorsFile f = good_case("kv_cache_append_batched_per_cache", m);
  f.tensors["cache_lens"].as<uint32_t>()[1] = 4;
  expect_error([&] { case_from_file(f); }, "cache_lens[1] = 4 is out of range: must be below capacity = 4");
  f = good_case("kv_cache_append_batched_per_cache", m);
  f.tensors.erase("caches.2");
  expect_error([&] { case_from_file(f); }, "missing tensor 'caches.2'");
}

TEST(OpValidation, CopySlicePastTheEnd) {
  const Op& op = op_or_throw("copy_slice");
  CopySliceParams p;
  p.src_offset = 2, p.dst_offset = 1, p.len = 8, p.src_len = 10, p.dst_len = 9;
  SafetensorsFile f = case_to_file(op, Params::of(p), op.make_case(Params::of(p), DType::F16, 3), {}, 3);
  EXPECT_NO_THROW(case_from_file(f));  // both slices end exactly at their buffer's end
  f.metadata["src_offset"] = "3";
  expect_error([&] { case_from_file(f); }, "src_offset 3 + len 8 runs past the end of src (10 elements)");
  f.metadata["src_offset"] = "2";
  f.metadata["dst_offset"] = "2";
  expect_error([&] { case_from_file(f); }, "dst_offset 2 + len 8 runs past the end of dst (9 elements)");
  f.metadata["dst_offset"] = "1";
  f.tensors["src"] = Tensor(DType::F16, {2, 5});
  expect_error([&] { case_from_file(f); }, "tensor 'src' must have rank 1");
}

TEST(OpValidation, StridedWindowPastTheRows) {
  const Op& op = op_or_throw("fused_silu_mul_split_strided");
  FusedSiluMulSplitStridedParams p;
  p.in_row_offset = 2, p.out_row_offset = 0, p.tokens = 3, p.intermediate = 4, p.in_rows = 5, p.out_rows = 3;
  SafetensorsFile f = case_to_file(op, Params::of(p), op.make_case(Params::of(p), DType::F32, 3), {}, 3);
  EXPECT_NO_THROW(case_from_file(f));
  f.metadata["in_row_offset"] = "3";
  expect_error([&] { case_from_file(f); }, "in_row_offset 3 + tokens 3 runs past gate_up's 5 rows");
  f.metadata["in_row_offset"] = "2";
  f.metadata["out_row_offset"] = "1";
  expect_error([&] { case_from_file(f); }, "out_row_offset 1 + tokens 3 runs past out's 3 rows");
}

TEST(OpValidation, ValidateCatchesBadIdsInGeneratedCases) {
  // Op::validate on a tensor map, as the matrix and run_case call it.
  const Op& op = op_or_throw("embedding_lookup");
  EmbeddingLookupParams p;
  p.dim = 3, p.vocab = 5, p.n = 4;
  TensorMap t = op.make_case(Params::of(p), DType::BF16, 11);
  EXPECT_NO_THROW(op.validate(Params::of(p), t));
  t["ids"].as<uint32_t>()[3] = 5;
  expect_error([&] { op.validate(Params::of(p), t); }, "ids[3] = 5 is out of range");
}

}  // namespace
}  // namespace ts
