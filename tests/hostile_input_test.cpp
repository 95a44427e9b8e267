// Hostile input: values chosen to wrap 64-bit arithmetic, to make the harness allocate
// far more than the file holds, or to slip past a lenient reader. Each must be a one-line Error
// naming the problem, before any kernel or large allocation.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "core/case_file.h"
#include "core/checked.h"
#include "core/memory_budget.h"
#include "core/op.h"
#include "core/ops/core/attention_common.h"
#include "core/ops/core_params.h"
#include "tests/temp_path.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kNear = kMax - 7;  // 2^63 - 8: any small length added to it wraps

// A case file of op `op` from parameters and zero-filled tensors {name, dtype, shape}.
struct T {
  std::string name;
  DType dt;
  Shape shape;
};
SafetensorsFile file(const std::string& op, std::map<std::string, std::string> meta, const std::vector<T>& tensors) {
  SafetensorsFile f;
  f.metadata = std::move(meta);
  f.metadata["op"] = op;
  for (const auto& t : tensors) f.tensors.emplace(t.name, Tensor(t.dt, t.shape));
  return f;
}
std::string s(int64_t v) { return std::to_string(v); }

// An environment variable set for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const char* v) : name(std::move(n)) { setenv(name.c_str(), v, 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

TEST(Checked, ArithmeticNeverWraps) {
  EXPECT_EQ(checked::add(kMax - 1, 1), kMax);
  expect_error([] { checked::add(kMax, 1, "pos"); }, "pos: 9223372036854775807 + 1 overflows");
  expect_error([] { checked::add(std::numeric_limits<int64_t>::min(), -1); }, "overflows");
  EXPECT_EQ(checked::mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  expect_error([] { checked::mul(2, int64_t{1} << 62, "2 im"); }, "2 im: 2 * 4611686018427387904 overflows");
  expect_error([] { checked::mul_u(uint64_t{1} << 32, uint64_t{1} << 32); }, "overflows");
  // The range check written so that nothing can wrap.
  EXPECT_TRUE(checked::fits(3, 7, 10));
  EXPECT_TRUE(checked::fits(10, 0, 10));
  EXPECT_FALSE(checked::fits(3, 8, 10));
  EXPECT_FALSE(checked::fits(kNear, 16, 10));  // kNear + 16 wraps negative: `offset + len <= size` passes
  EXPECT_FALSE(checked::fits(16, kNear, 10));
  EXPECT_FALSE(checked::fits(-1, 1, 10));
  EXPECT_FALSE(checked::fits(0, -1, 10));
  EXPECT_FALSE(checked::fits(kMax, kMax, kMax));
  EXPECT_TRUE(checked::fits(kMax, 0, kMax));
  EXPECT_FALSE(checked::fits_u(~uint64_t{0}, 2, 10));
  // Element counts.
  EXPECT_EQ(checked::numel(Shape{2, 3, 4}), 24);
  EXPECT_EQ(checked::numel(Shape{}), 1);
  EXPECT_EQ(checked::numel(Shape{int64_t{1} << 20, 0, int64_t{1} << 19}), 0);
  // A zero dimension does not excuse the others: their product is used on its own (rows, strides).
  expect_error([] { checked::numel(Shape{int64_t{1} << 62, 0, int64_t{1} << 62}); }, "larger than the limit");
  expect_error([] { checked::numel(Shape{int64_t{1} << 32, int64_t{1} << 32}); }, "larger than the limit");
  expect_error([] { checked::numel(Shape{int64_t{1} << 62, int64_t{1} << 62, 4}); }, "larger than the limit");
  expect_error([] { checked::numel(Shape{3, -1}); }, "negative dimension");
  expect_error([] { shape_numel({int64_t{1} << 21, int64_t{1} << 21}); }, "is too large");
}

TEST(Hostile, CopySliceOffsetsNear2To63) {
  const std::vector<T> t = {{"src", DType::F32, {10}}, {"dst", DType::F32, {10}}};
  expect_error([&] { case_from_file(file("copy_slice", {{"src_offset", s(kNear)}, {"dst_offset", "0"}, {"len", "16"}}, t)); },
               "src_offset 9223372036854775800 + len 16 runs past the end of src (10 elements)");
  expect_error([&] { case_from_file(file("copy_slice", {{"src_offset", "0"}, {"dst_offset", s(kNear)}, {"len", "8"}}, t)); },
               "dst_offset 9223372036854775800 + len 8 runs past the end of dst (10 elements)");
  expect_error([&] { case_from_file(file("copy_slice", {{"src_offset", "2"}, {"dst_offset", "2"}, {"len", s(kMax)}}, t)); },
               "runs past the end of src");
}

TEST(Hostile, KvCacheLengthsNear2To63) {
  const std::vector<T> t = {{"cache_k", DType::F32, {1, 4, 2}}, {"cache_v", DType::F32, {1, 4, 2}},
                            {"new_k_head_major", DType::F32, {1, 16, 2}}, {"new_v_head_major", DType::F32, {1, 16, 2}}};
  expect_error([&] {
    case_from_file(file("kv_cache_append_head_major",
                        {{"cache_len", s(kNear)}, {"cache_capacity", "4"}, {"new_tokens", "16"}, {"nkv", "1"}, {"hd", "2"}}, t));
  }, "cache overflow: cache_len 9223372036854775800 + new_tokens 16 exceeds cache_capacity 4");

  SplitQkvNormRopeIntoCacheParams p;
  p.tokens = 16, p.head_dim = 2, p.cache_len = kNear, p.cache_capacity = 4, p.max_pos = 64;
  expect_error([&] { op_or_throw("split_qkv_norm_rope_into_cache").validate(Params::of(p), {}); },
               "cache_len 9223372036854775800 + tokens 16 do not fit cache_capacity 4");
}

std::vector<T> rope_tensors(int64_t tokens) {
  return {{"input", DType::F32, {tokens, 1, 2}}, {"norm_w", DType::F32, {2}}, {"cos", DType::F32, {4, 1}},
          {"sin", DType::F32, {4, 1}}};
}

TEST(Hostile, RopePositionsNear2To63) {
  for (const char* mode : {"1", "2", "0"}) {  // mode 0 reads no table, but pos_offset + tokens must still fit
    const auto f = file("qk_norm_rope", {{"tokens", "2"}, {"heads", "1"}, {"head_dim", "2"}, {"pos_offset", s(kMax)},
                                         {"eps", "1e-6"}, {"mode", mode}}, rope_tensors(2));
    expect_error([&] { case_from_file(f); }, "positions pos_offset + tokens: 9223372036854775807 + 2 overflows");
  }
  // Below 2^63 but past the tables: refused where the op reads them.
  expect_error([&] {
    case_from_file(file("qk_norm_rope", {{"tokens", "2"}, {"heads", "1"}, {"head_dim", "2"}, {"pos_offset", s(kNear - 8)},
                                         {"eps", "1e-6"}, {"mode", "1"}}, rope_tensors(2)));
  }, "reach past the RoPE tables");
  const std::vector<T> split = {{"qkv", DType::F32, {2, 6}}, {"q_norm_w", DType::F32, {2}}, {"k_norm_w", DType::F32, {2}},
                                {"cos", DType::F32, {4, 1}}, {"sin", DType::F32, {4, 1}}};
  for (const char* mode : {"1", "0"})
    expect_error([&] {
      case_from_file(file("split_qkv_norm_rope", {{"tokens", "2"}, {"q_heads", "1"}, {"kv_heads", "1"}, {"head_dim", "2"},
                                                  {"pos_offset", s(kMax)}, {"eps", "1e-6"}, {"qk_mode", mode}}, split));
    }, "overflows");
}

TEST(Hostile, AttentionPositionsNear2To63) {
  const std::vector<T> qkv = {{"q", DType::F32, {1, 1, 2, 2}}, {"k", DType::F32, {1, 1, 2, 2}}, {"v", DType::F32, {1, 1, 2, 2}}};
  expect_error([&] {
    case_from_file(file("flash_attention", {{"batch", "1"}, {"q_len", "2"}, {"kv_len", "2"}, {"pos_offset", s(kMax)},
                                            {"num_heads", "1"}, {"num_kv_heads", "1"}, {"head_dim", "2"}, {"causal", "true"},
                                            {"scale", "0.5"}, {"kv_seq_stride", "0"}, {"sliding_window", "0"}}, qkv));
  }, "positions pos_offset + q_len: 9223372036854775807 + 2 overflows");
  MlaAttentionParams m;
  m.pos_offset = kMax - 1, m.q_len = 2;
  expect_error([&] { op_or_throw("mla_attention").validate(Params::of(m), {}); }, "overflows");
  // The visibility rule itself: pos + 1 for the last position is an Error, not a wrap.
  expect_error([] { attn::visible(kMax, 4, true, 0); }, "query position + 1");
  EXPECT_EQ(attn::visible(kMax - 1, 4, true, 2).size(), 0);
}

TEST(Hostile, StridedSiluOffsetsNear2To63) {
  const std::vector<T> t = {{"gate_up", DType::F32, {4, 4}}, {"out", DType::F32, {20, 2}}};
  expect_error([&] {
    case_from_file(file("fused_silu_mul_split_strided",
                        {{"in_row_offset", s(kNear)}, {"out_row_offset", "0"}, {"tokens", "16"}, {"intermediate", "2"}}, t));
  }, "in_row_offset 9223372036854775800 + tokens 16 runs past gate_up's 4 rows");
  expect_error([&] {
    case_from_file(file("fused_silu_mul_split_strided",
                        {{"in_row_offset", "0"}, {"out_row_offset", s(kNear)}, {"tokens", "2"}, {"intermediate", "2"}}, t));
  }, "out_row_offset 9223372036854775800 + tokens 2 runs past out's 20 rows");
}

TEST(Hostile, ShapeProductsThatWrap) {
  expect_error([] {
    case_from_file(file("fused_silu_mul_split", {{"tokens", "1"}, {"im", s(int64_t{1} << 62)}}, {{"gate_up", DType::F32, {1, 2}}}));
  }, "2 im: 2 * 4611686018427387904 overflows");
  expect_error([] {
    case_from_file(file("split_qkv", {{"tokens", "1"}, {"q_dim", "1"}, {"kv_dim", s(int64_t{1} << 62)}}, {{"qkv", DType::F32, {1, 3}}}));
  }, "overflows");
  // q_heads * head_dim: (2^40 + 2) * 2^30 wraps; refused while parsing, before any shape is built.
  SplitQkvNormRopeParams p;
  p.q_heads = int64_t{1} << 40, p.head_dim = int64_t{1} << 30, p.qk_mode = 0;
  expect_error([&] { op_or_throw("split_qkv_norm_rope").validate(Params::of(p), {}); }, "qkv width");
}

TEST(Hostile, ListSizedByAParameterIsCheckedAgainstTheTensors) {
  // m = 10^12 per-cache tensors declared by a file holding one: refused before any declaration is built.
  const auto start = std::chrono::steady_clock::now();
  expect_error([] {
    case_from_file(file("kv_cache_append_batched_per_cache", {{"capacity", "2"}, {"m", "1000000000000"}, {"nkv", "1"}, {"hd", "1"}},
                        {{"caches.0", DType::F32, {1, 2, 1}}, {"new_data", DType::F32, {1, 1, 1}}, {"cache_lens", DType::U32, {1}}}));
  }, "missing tensor 'caches.1' (m = 1000000000000, 1 caches.* tensors present)");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // flash_attention_batched_per_cache infers m from q: a q of 2^40 sequences and no data is refused too.
  expect_error([] {
    case_from_file(file("flash_attention_batched_per_cache", {{"nq", "1"}, {"nkv", "1"}, {"hd", "1"}, {"scale", "1"}, {"capacity", "1"}},
                        {{"q", DType::F32, {int64_t{1} << 40, 0, 1}}, {"kv_lens", DType::U32, {0}}}));
  }, "sequences");
}

TEST(Hostile, MemoryBudget) {
  EXPECT_EQ(parse_byte_count("4G"), uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_count("512M"), uint64_t{512} << 20);
  EXPECT_EQ(parse_byte_count("64K"), uint64_t{64} << 10);
  EXPECT_EQ(parse_byte_count("123"), 123u);
  EXPECT_EQ(parse_byte_count("2gb"), uint64_t{2} << 30);
  expect_error([] { parse_byte_count("lots"); }, "is not a byte count");
  expect_error([] { parse_byte_count("4Q"); }, "unknown unit");
  expect_error([] { parse_byte_count("99999999999999999999"); }, "overflows");
  expect_error([] { parse_byte_count("17000000T"); }, "overflows");
  EXPECT_GT(memory_budget(), uint64_t{1} << 20);

  // gemm m = n = 65536, k = 1: 512 KiB of inputs ask for a 16 GiB output. Refused before allocation.
  const ScopedEnv env("TOUCHSTONE_MEMORY_BUDGET", "1G");
  EXPECT_EQ(memory_budget(), uint64_t{1} << 30);
  const auto f = file("gemm", {{"m", "65536"}, {"n", "65536"}, {"k", "1"}},
                      {{"a", DType::F32, {65536, 1}}, {"b", DType::F32, {65536, 1}}});
  expect_error([&] { case_from_file(f); }, "more than the memory budget of 1073741824 bytes");
  // Generation goes through the same check.
  GemmParams g;
  g.m = g.n = 65536, g.k = 1;
  expect_error([&] { op_or_throw("gemm").make_case(Params::of(g), DType::F32, 1); }, "memory budget");
  // And the reader weighs a file's tensors before it allocates them.
  const std::string bytes = serialize_safetensors(file("gemm", {}, {{"a", DType::F32, {1 << 16}}}));
  const ScopedEnv tiny("TOUCHSTONE_MEMORY_BUDGET", "64K");
  expect_error([&] { parse_safetensors(bytes); }, "the file's tensors need");
}

// Work a case asks for is bounded like its memory: gemm 4096^3 (1.4e11 FLOPs in 200 MB) is refused
// before anything is generated or computed, with its figures; the budget is the user's to set.
TEST(Hostile, WorkBudget) {
  EXPECT_EQ(parse_operation_count("20G"), uint64_t{20'000'000'000});
  EXPECT_EQ(parse_operation_count("123"), 123u);
  expect_error([] { parse_operation_count("lots"); }, "TOUCHSTONE_WORK_BUDGET 'lots' is not an operation count");
  expect_error([] { parse_operation_count("99999999999999999999"); }, "overflows");
  EXPECT_EQ(work_budget(), kDefaultWorkBudget);
  GemmParams g;
  g.m = g.n = g.k = 4096;
  const auto start = std::chrono::steady_clock::now();
  expect_error([&] { generate_case(op_or_throw("gemm"), Params::of(g), DType::F32, 1); },
               "gemm (k=4096,m=4096,n=4096): the case asks for 1.38e+11 operations (1.37e+11 FLOPs + 2.01e+08 bytes "
               "moved, by the op's cost model), more than the work budget of 1.72e+10 operations");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  const ScopedEnv env("TOUCHSTONE_WORK_BUDGET", "1K");
  g.m = g.n = g.k = 8;  // 1024 FLOPs + 768 bytes
  expect_error([&] { generate_case(op_or_throw("gemm"), Params::of(g), DType::F32, 1); }, "work budget of 1e+03");
}

// The default budget (a quarter of physical memory) must never refuse the project's own conformance
// cases: the largest, in its widest dtype, stays far below what a 4 GiB machine allows. Benchmark
// presets may be model-sized: the largest is the KV cache of 32 Llama-3-8B sequences of 16k tokens
// in F16 (2 GiB, the kv decode preset), which needs a machine of 8 GiB or more.
TEST(Hostile, EveryPresetFitsASmallBudget) {
  for (const bool benches : {false, true}) {
    uint64_t largest = 0;
    std::string which;
    for (const Op* op : all_ops())
      for (const auto& c : benches ? op->benches() : op->cases())
        for (DType dt : c.dtypes) {
          const uint64_t b = decls_footprint(op->tensors(c.params, dt));
          if (b > largest) largest = b, which = fmt::format("{}/{}/{}", op->name(), c.name, dtype_name(dt));
        }
    EXPECT_LE(largest, benches ? (uint64_t{2} << 30) + (uint64_t{64} << 20) : uint64_t{1} << 30) << which;
    std::cout << "largest " << (benches ? "bench preset: " : "case: ") << which << ", " << largest / (1 << 20) << " MiB\n";
  }
}

TEST(Hostile, ZeroSizeTensorsCostNothing) {
  SafetensorsFile f;
  for (int i = 0; i < 200000; ++i) f.tensors.emplace(fmt::format("t{}", i), Tensor(DType::F32, {0, 7}));
  const std::string bytes = serialize_safetensors(f);
  const ScopedEnv env("TOUCHSTONE_MEMORY_BUDGET", "64M");  // 200000 guard zones would be 1.6 GB
  const SafetensorsFile back = parse_safetensors(bytes);
  ASSERT_EQ(back.tensors.size(), 200000u);
  const Tensor& a = back.tensors.at("t0");
  const Tensor& b = back.tensors.at("t199999");
  EXPECT_EQ(a.storage(), b.storage());  // one shared guard block
  EXPECT_EQ(a.numel(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
  EXPECT_TRUE(a.guards_intact());
  EXPECT_EQ(a.storage_bytes(), 2 * kGuardBytes);
}

// A file from a raw header text and data bytes.
std::string raw(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}
const std::string kA = R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
const std::string kB4 = R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]})";

TEST(StrictReader, AcceptsWhatItWrites) {
  EXPECT_NO_THROW(parse_safetensors(raw("{" + kA + "," + kB4 + "}", std::string(8, '\0'))));
  EXPECT_NO_THROW(parse_safetensors(raw("{" + kA + "}      ", std::string(4, '\0'))));  // space padding
  EXPECT_NO_THROW(parse_safetensors(raw("{}")));
  // Zero-size tensors may sit anywhere a tensor could start.
  EXPECT_NO_THROW(parse_safetensors(
      raw("{" + kA + R"(,"z":{"dtype":"F32","shape":[0],"data_offsets":[4,4]}})", std::string(4, '\0'))));
}

TEST(StrictReader, RejectsWhatSafetensorsRejects) {
  const std::string d8(8, '\0');
  expect_error([&] { parse_safetensors(raw("{" + kA + "}" + std::string(1, '\0') + "  ", d8.substr(4))); }, "NUL byte");
  expect_error([&] { parse_safetensors(raw(R"({"__metadata__":{"op":"gemm)" + std::string(1, '\0') + R"("}})")); },
               "NUL byte at offset 27");
  expect_error([&] { parse_safetensors(raw("{" + kA + "} x", d8.substr(4))); }, "bytes after its JSON object");
  expect_error([&] { parse_safetensors(raw("{" + kA + "}\n", d8.substr(4))); }, "only spaces may pad it");
  expect_error([&] { parse_safetensors(raw(" {" + kA + "}", d8.substr(4))); }, "does not start with '{'");
  expect_error([&] { parse_safetensors(raw("{" + kA + "}{}", d8.substr(4))); }, "not valid JSON");
  // Duplicate keys: tensor names, metadata keys, the op itself.
  expect_error([&] { parse_safetensors(raw("{" + kA + "," + kA + "}", d8.substr(4))); }, "the key 'a' twice");
  expect_error([&] { parse_safetensors(raw(R"({"__metadata__":{"op":"gemm","m":"2","op":"gelu"}})")); },
               "the key 'op' twice");
  expect_error([&] { parse_safetensors(raw(R"({"__metadata__":{},"__metadata__":{}})")); }, "twice");
  expect_error([&] { parse_safetensors(raw(R"({"a":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", d8.substr(4))); },
               "the key 'dtype' twice");
  // Data offsets: overlapping, leaving a gap, or not covering the whole data section.
  expect_error([&] {
    parse_safetensors(raw(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          std::string(12, '\0')));
  }, "overlap tensor 'a'");
  expect_error([&] {
    parse_safetensors(raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                          std::string(4, '\0')));
  }, "overlap");
  expect_error([&] {
    parse_safetensors(raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                          std::string(12, '\0')));
  }, "leaves 4 unused bytes after offset 4");
  expect_error([&] { parse_safetensors(raw("{" + kA + "}", d8)); }, "4 bytes after the last tensor's data");
  expect_error([&] { parse_safetensors(raw("{" + kA + "," + kB4 + "}", d8.substr(2))); }, "the data section is 6 bytes");
  expect_error([&] { parse_safetensors(raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", d8.substr(4))); },
               "unknown field 'x'");
  // Offsets near 2^64 cannot wrap the byte-count check.
  expect_error([&] {
    parse_safetensors(raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,0]}})", d8.substr(4)));
  }, "begin");
  expect_error([&] {
    parse_safetensors(raw(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,18446744073709551615]}})"));
  }, "");
}

fs::path temp(const std::string& name) { return ts::test::temp_path("hostile_" + name); }

TEST(StrictReader, StreamsAreReadOnlyAsFarAsTheHeaderSays) {
  // /dev/zero: an 8-byte length of 0, refused at once instead of read to exhaustion.
  const auto start = std::chrono::steady_clock::now();
  expect_error([] { read_safetensors("/dev/zero"); }, "/dev/zero: header length 0 is too short");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  expect_error([] { read_safetensors("/"); }, "is a directory");
  expect_error([] { read_safetensors(temp("does_not_exist").string()); }, "cannot open");
  // A valid file followed by more bytes than its tensors declare.
  const fs::path p = temp("trailing.safetensors");
  {
    std::ofstream out(p, std::ios::binary);
    out << raw("{" + kA + "}", std::string(4, '\0')) << "extra";
  }
  expect_error([&] { read_safetensors(p.string()); }, "bytes after the last tensor's data");
  {
    std::ofstream out(p, std::ios::binary);
    out << raw("{" + kA + "," + kB4 + "}", std::string(5, '\0'));
  }
  expect_error([&] { read_safetensors(p.string()); }, "the file ends inside the data section (3 bytes short)");
  fs::remove(p);
}

TEST(OutputFiles, NoPartialFileOnAnyFailure) {
  SafetensorsFile f;
  f.tensors.emplace("a", Tensor(DType::F32, {3}));
  const fs::path dir = temp("out_dir");
  fs::create_directories(dir);
  expect_error([&] { write_safetensors(dir.string(), f); }, "is a directory");
  EXPECT_FALSE(fs::exists(dir.string() + ".partial"));
  expect_error([&] { write_safetensors("", f); }, "output file name is empty");
  expect_error([&] { write_safetensors((dir / "no" / "such" / "dir.safetensors").string(), f); }, "cannot write");
  EXPECT_FALSE(fs::exists(dir / "no"));
  const fs::path ok = dir / "ok.safetensors";
  write_safetensors(ok.string(), f);
  EXPECT_TRUE(fs::exists(ok));
  EXPECT_FALSE(fs::exists(ok.string() + ".partial"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ts
