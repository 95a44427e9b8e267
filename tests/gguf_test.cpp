// The GGUF reader (core/gguf.h): files from the test writer (v2 and v3, every metadata type, nested
// arrays, alignments 1, 32 and 64) read back exactly; ggml's own model.gguf lists the tensors its
// README names, with bytes equal to the .q side files; hostile files are one-line Errors, never crashes.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include <gtest/gtest.h>

#include "core/gguf.h"
#include "tests/expect_error.h"
#include "tests/gguf_writer.h"
#include "tests/temp_path.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using gguf::ValueType;
using test::GgufWriter;

const fs::path kData = fs::path(TOUCHSTONE_SOURCE_DIR) / "tests" / "data" / "ggml-gguf";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(static_cast<bool>(in)) << "cannot open " << p;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path write_temp(const std::string& name, const std::string& bytes) {
  const fs::path p = ts::test::temp_path("gguf_test_" + name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 17) & 0xff);
  return s;
}

// Every metadata type once, arrays of strings, an array of arrays, and tensors of a touchstone kind, a
// kind it does not implement (Q3_K) and a 3-D F32 tensor.
GgufWriter every_kind_of_file(uint32_t version, uint64_t alignment) {
  GgufWriter w;
  w.version = version;
  w.alignment = alignment;
  w.kv("general.architecture", test::gv_str("llama"));
  if (alignment != 32) w.kv("general.alignment", test::gv(ValueType::UINT32, alignment));
  w.kv("u8", test::gv(ValueType::UINT8, 255));
  w.kv("i8", test::gv_int(ValueType::INT8, -128));
  w.kv("u16", test::gv(ValueType::UINT16, 65535));
  w.kv("i16", test::gv_int(ValueType::INT16, -32768));
  w.kv("u32", test::gv(ValueType::UINT32, 4294967295u));
  w.kv("i32", test::gv_int(ValueType::INT32, -2147483647 - 1));
  w.kv("f32", test::gv_float(ValueType::FLOAT32, 0.25));
  w.kv("bool", test::gv_bool(true));
  w.kv("string", test::gv_str("h\xc3\xa9llo, \xe4\xb8\x96\xe7\x95\x8c"));
  w.kv("empty string", test::gv_str(""));
  w.kv("u64", test::gv(ValueType::UINT64, UINT64_MAX));
  w.kv("i64", test::gv_int(ValueType::INT64, INT64_MIN));
  w.kv("f64", test::gv_float(ValueType::FLOAT64, -1e300));
  w.kv("strings", test::gv_array(ValueType::STRING, {test::gv_str("<s>"), test::gv_str(""), test::gv_str("x")}));
  w.kv("empty array", test::gv_array(ValueType::INT32, {}));
  w.kv("nested", test::gv_array(ValueType::ARRAY,
                                {test::gv_array(ValueType::UINT16, {test::gv(ValueType::UINT16, 1)}),
                                 test::gv_array(ValueType::BOOL, {test::gv_bool(false), test::gv_bool(true)})}));
  w.tensor("q4_0", {64, 3}, 2, pattern(3 * 2 * 18, 1));
  w.tensor("q3_k", {256}, 11, pattern(110, 2));
  w.tensor("f32.3d", {4, 3, 2}, 0, pattern(4 * 3 * 2 * 4, 3));
  return w;
}

void expect_reads_back(const GgufWriter& w, const gguf::Header& h, const std::string& file) {
  EXPECT_EQ(h.version, w.version);
  EXPECT_EQ(h.alignment, w.alignment);
  EXPECT_EQ(h.file_size, file.size());
  EXPECT_EQ(h.data_offset % w.alignment, 0u);
  ASSERT_EQ(h.metadata.size(), w.metadata.size());
  for (size_t i = 0; i < w.metadata.size(); ++i) {
    EXPECT_EQ(h.metadata[i].key, w.metadata[i].key);
    EXPECT_EQ(h.metadata[i].value, w.metadata[i].value) << w.metadata[i].key << ": " << h.metadata[i].value.str();
  }
  ASSERT_EQ(h.tensors.size(), w.tensors.size());
  for (size_t i = 0; i < w.tensors.size(); ++i) {
    const gguf::TensorInfo& t = h.tensors[i];
    EXPECT_EQ(t.name, w.tensors[i].name);
    EXPECT_EQ(t.ne, w.tensors[i].ne);
    EXPECT_EQ(t.type->id, w.tensors[i].type);
    EXPECT_EQ(t.offset % w.alignment, 0u) << t.name;
    EXPECT_EQ(t.bytes, w.tensors[i].data.size()) << t.name;
    EXPECT_EQ(file.substr(t.offset, t.bytes), w.tensors[i].data) << t.name;
  }
}

TEST(Gguf, WriterFilesReadBackExactly) {
  for (uint32_t version : {2u, 3u})
    for (uint64_t alignment : {32u, 64u, 1u}) {
      SCOPED_TRACE(testing::Message() << "v" << version << " alignment " << alignment);
      const GgufWriter w = every_kind_of_file(version, alignment);
      const std::string bytes = w.bytes();
      expect_reads_back(w, gguf::parse(bytes), bytes);
      // The same through the file, with each tensor's bytes read on demand.
      const gguf::File f(write_temp("roundtrip", bytes).string());
      expect_reads_back(w, f.header(), bytes);
      for (const auto& t : w.tensors) {
        const std::vector<uint8_t> got = f.read(f.tensor(t.name));
        EXPECT_EQ(std::string(got.begin(), got.end()), t.data) << t.name;
      }
    }
}

TEST(Gguf, ShapesKindsAndNames) {
  const gguf::Header h = gguf::parse(every_kind_of_file(3, 32).bytes());
  const gguf::TensorInfo& q = *h.tensor("q4_0");
  EXPECT_EQ(q.kind(), QuantKind::Q4_0);
  EXPECT_EQ(q.n_rows(), 3);
  EXPECT_EQ(q.n_cols(), 64);
  EXPECT_EQ(q.shape(), (std::vector<int64_t>{3, 64}));
  EXPECT_EQ(h.tensor("f32.3d")->shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(h.tensor("f32.3d")->n_rows(), 6);
  EXPECT_EQ(h.tensor("q3_k")->type->name, "Q3_K");
  expect_error([&] { h.tensor("q3_k")->kind(); },
               "tensor 'q3_k' has type Q3_K, which touchstone does not implement (implemented: Q4_0|");
  EXPECT_EQ(h.find("nested")->str(), "[[1], [false, true]]");
  EXPECT_EQ(h.find("general.architecture")->str(), "llama");
  EXPECT_EQ(h.find("missing"), nullptr);
}

TEST(Gguf, TypeIdsAreGgmls) {
  struct Want {
    uint32_t id;
    const char* name;
    std::optional<QuantKind> kind;
  };
  for (const Want& w : {Want{0, "F32", QuantKind::F32}, Want{1, "F16", QuantKind::F16}, Want{2, "Q4_0", QuantKind::Q4_0},
                        Want{3, "Q4_1", QuantKind::Q4_1}, Want{8, "Q8_0", QuantKind::Q8_0},
                        Want{10, "Q2_K", std::nullopt}, Want{11, "Q3_K", std::nullopt},
                        Want{12, "Q4_K", QuantKind::Q4_K}, Want{13, "Q5_K", QuantKind::Q5_K},
                        Want{14, "Q6_K", QuantKind::Q6_K}, Want{23, "IQ4_XS", std::nullopt},
                        Want{30, "BF16", QuantKind::BF16}}) {
    const gguf::TypeInfo* t = gguf::type_info(w.id);
    ASSERT_NE(t, nullptr) << w.id;
    EXPECT_EQ(t->name, w.name);
    EXPECT_EQ(t->kind, w.kind) << w.name;
  }
  for (uint32_t retired : {4u, 5u, 31u, 36u, 40u, 1000u}) EXPECT_EQ(gguf::type_info(retired), nullptr) << retired;
}

// ggml's own file (tests/data/ggml-gguf/README.md).
TEST(Gguf, GgmlModelListsItsTensorsWithTheirBytes) {
  const gguf::File f((kData / "model.gguf").string());
  const gguf::Header& h = f.header();
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.alignment, 32u);
  EXPECT_EQ(h.metadata.size(), 12u);
  EXPECT_EQ(h.find("general.architecture")->str(), "llama");
  EXPECT_EQ(h.find("tokenizer.ggml.tokens")->str(), "[<s>, </s>, hello, \xe4\xb8\x96\xe7\x95\x8c, ]");
  EXPECT_EQ(std::get<int64_t>(h.find("touchstone.i64")->v), -1234567890123);
  struct Want {
    const char* name;
    const char* type;
    std::vector<int64_t> shape;
  };
  const std::vector<Want> want = {
      {"blk.0.attn_q.weight", "Q4_K", {48, 512}},  {"blk.0.attn_v.weight", "Q6_K", {32, 256}},
      {"blk.0.ffn_down.weight", "Q5_K", {16, 768}}, {"blk.0.attn_k.weight", "Q8_0", {24, 96}},
      {"blk.0.ffn_gate.weight", "Q4_0", {20, 160}}, {"blk.0.ffn_up.weight", "Q4_1", {12, 64}},
      {"blk.0.attn_output.weight", "Q3_K", {8, 256}}, {"token_embd.weight", "F16", {10, 64}},
      {"output_norm.weight", "F32", {64}},
  };
  ASSERT_EQ(h.tensors.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(h.tensors[i].name, want[i].name);
    EXPECT_EQ(h.tensors[i].type->name, want[i].type) << want[i].name;
    EXPECT_EQ(h.tensors[i].shape(), want[i].shape) << want[i].name;
  }
  for (size_t i = 0; i < 6; ++i) {
    const std::vector<uint8_t> got = f.read(f.tensor(want[i].name));
    EXPECT_EQ(std::string(got.begin(), got.end()), slurp(kData / (std::string(want[i].name) + ".q"))) << want[i].name;
  }
  expect_error([&] { f.tensor("blk.0.attn_x.weight"); }, "no tensor 'blk.0.attn_x.weight' in the file (it has 9 tensors");
}

// The fuzzer's seeds (fuzz/make_gguf_corpus.py, a second writer): the valid ones read, the others do not.
TEST(Gguf, FuzzSeedsReadAsNamed) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TOUCHSTONE_SOURCE_DIR) / "fuzz" / "corpus" / "gguf")) {
    const std::string name = e.path().filename().string();
    const std::string bytes = slurp(e.path());
    if (name.rfind("valid_", 0) == 0) {
      EXPECT_NO_THROW(gguf::parse(bytes)) << name;
    } else {
      expect_error([&] { gguf::parse(bytes); }, "");
    }
    ++n;
  }
  EXPECT_GE(n, 10);
}

// --- hostile files -------------------------------------------------------------------------------

GgufWriter small_file() {
  GgufWriter w;
  w.kv("general.name", test::gv_str("tiny"));
  w.kv("list", test::gv_array(ValueType::ARRAY, {test::gv_array(ValueType::STRING, {test::gv_str("a")})}));
  w.kv("f", test::gv_float(ValueType::FLOAT32, 1.5));
  w.tensor("w", {32, 2}, 8, pattern(2 * 34, 4));
  w.tensor("v", {8}, 0, pattern(32, 5));
  return w;
}

TEST(GgufHostile, EveryTruncationIsAnError) {
  const std::string bytes = small_file().bytes();
  ASSERT_NO_THROW(gguf::parse(bytes));
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    expect_error([&] { gguf::parse(std::string_view(bytes).substr(0, n)); }, n < 4 ? "ends inside the magic" : "");
  }
}

TEST(GgufHostile, HeaderFields) {
  std::string magic = small_file().bytes();
  magic[3] = 'G';
  expect_error([&] { gguf::parse(magic); }, "not a GGUF file (magic 47 47 55 47");
  for (uint32_t v : {1u, 4u, 0x03000000u}) {
    GgufWriter w = small_file();
    w.version = v;
    expect_error([&] { gguf::parse(w.bytes()); }, v == 1 ? "version 1 is not supported" : v == 4 ? "version 4 is not supported" : "big-endian");
  }
  std::string tensors = small_file().bytes();
  GgufWriter::poke(tensors, GgufWriter::kTensorCountAt, uint64_t{1} << 60);
  expect_error([&] { gguf::parse(tensors); }, "tensor count 1152921504606846976 is more than the file can hold");
  std::string kvs = small_file().bytes();
  GgufWriter::poke(kvs, GgufWriter::kMetadataCountAt, UINT64_MAX);
  expect_error([&] { gguf::parse(kvs); }, "metadata count 18446744073709551615 is more than the file can hold");
  std::string key = small_file().bytes();
  GgufWriter::poke(key, GgufWriter::kFirstKeyLengthAt, UINT64_MAX - 3);
  expect_error([&] { gguf::parse(key); }, "a string of 18446744073709551612 bytes runs past the end of the file");
}

TEST(GgufHostile, Metadata) {
  const auto with = [](std::string key, gguf::Value v) {
    GgufWriter w = small_file();
    w.kv(std::move(key), std::move(v));
    return w.bytes();
  };
  expect_error([&] { gguf::parse(with("general.name", test::gv_str("again"))); }, "metadata key 'general.name' appears twice");
  expect_error([&] { gguf::parse(with("b", test::gv(ValueType::BOOL, 2))); }, "metadata 'b': a BOOL holds 2");
  expect_error([&] { gguf::parse(with("t", test::gv(static_cast<ValueType>(13), 0))); }, "metadata 't': unknown value type 13");
  expect_error([&] { gguf::parse(with("general.alignment", test::gv(ValueType::UINT32, 48))); },
               "general.alignment 48 is not a power of two");
  expect_error([&] { gguf::parse(with("general.alignment", test::gv(ValueType::UINT32, 0))); },
               "general.alignment 0 is not a power of two");
  expect_error([&] { gguf::parse(with("general.alignment", test::gv(ValueType::UINT64, 32))); },
               "general.alignment is a UINT64, not a UINT32");
  gguf::Value deep = test::gv_array(ValueType::UINT8, {});
  for (int i = 0; i < 9; ++i) deep = test::gv_array(ValueType::ARRAY, {deep});
  expect_error([&] { gguf::parse(with("deep", deep)); }, "metadata 'deep': arrays nested more than 8 deep");
  // An array claiming more elements than the file has bytes for.
  std::string huge = with("arr", test::gv_array(ValueType::UINT32, {test::gv(ValueType::UINT32, 7)}));
  const size_t count_at = huge.find("arr") + 3 + 4 + 4;
  GgufWriter::poke(huge, count_at, uint64_t{1} << 61);
  expect_error([&] { gguf::parse(huge); }, "metadata 'arr': array length 2305843009213693952 is more than the file can hold");
}

TEST(GgufHostile, TensorInfos) {
  const auto with = [](std::vector<int64_t> ne, uint32_t type, std::string data, std::optional<uint64_t> offset = {}) {
    GgufWriter w = small_file();
    w.tensor("x", std::move(ne), type, std::move(data), offset);
    return w.bytes();
  };
  expect_error([&] { gguf::parse(with({1, 1, 1, 1, 1}, 0, pattern(4, 0))); }, "tensor 'x': 5 dimensions (1 to 4");
  expect_error([&] { gguf::parse(with({}, 0, "")); }, "tensor 'x': 0 dimensions");
  expect_error([&] { gguf::parse(with({1 << 30, 1 << 30, 1 << 30}, 0, "")); }, "tensor 'x': ");
  // Found by the fuzzer: an empty tensor whose other dimensions multiply past 2^63.
  expect_error([&] { gguf::parse(with({0, int64_t{1} << 62, int64_t{1} << 41}, 0, "")); }, "larger than the limit");
  expect_error([&] { gguf::parse(with({-1}, 0, "")); }, "tensor 'x': dimension 0 is 18446744073709551615");
  expect_error([&] { gguf::parse(with({8}, 4, pattern(32, 0))); }, "tensor 'x': unknown ggml type id 4");
  expect_error([&] { gguf::parse(with({48}, 2, pattern(27, 0))); }, "tensor 'x': rows of 48 values are not a whole number of Q4_0 blocks");
  expect_error([&] { gguf::parse(with({8}, 0, pattern(32, 0), 200)); }, "tensor 'x': offset 200 is not a multiple of the alignment 32");
  expect_error([&] { gguf::parse(with({8}, 0, pattern(32, 0), 1024)); }, "tensor 'x': its 32 bytes at offset 1024");
  expect_error([&] { gguf::parse(with({8}, 0, pattern(32, 0), 0)); }, "overlaps tensor");
  expect_error([&] { gguf::parse(with({8}, 0, pattern(32, 0), UINT64_MAX - 31)); }, "run past the end of the file");
  GgufWriter twice = small_file();
  twice.tensor("w", {8}, 0, pattern(32, 0));
  expect_error([&] { gguf::parse(twice.bytes()); }, "tensor 'w' appears twice");
  // A name with a line break in it still makes a one-line error.
  GgufWriter newline = small_file();
  newline.tensor("a\nb", {8}, 0, pattern(32, 0));
  newline.tensor("a\nb", {8}, 0, pattern(32, 0));
  expect_error([&] { gguf::parse(newline.bytes()); }, "tensor 'a\\x0ab' appears twice");
  EXPECT_EQ(gguf::printable(std::string(200, 'n')), std::string(120, 'n') + "...");
  // Data past the end of the file: the last tensor cut short.
  std::string cut = small_file().bytes();
  cut.resize(cut.size() - 1);
  expect_error([&] { gguf::parse(cut); }, "tensor 'v': its 32 bytes");
}

TEST(GgufHostile, FilesNameThemselves) {
  std::string cut = small_file().bytes();
  cut.resize(cut.size() - 1);
  const fs::path p = write_temp("cut", cut);
  expect_error([&] { gguf::File f(p.string()); }, p.string() + ": tensor 'v': its 32 bytes");
  expect_error([&] { gguf::File f("/nonexistent/x.gguf"); }, "/nonexistent/x.gguf: no such file");
  expect_error([&] { gguf::File f(fs::temp_directory_path().string()); }, "is not a regular file");
  expect_error([&] { gguf::File f("/dev/zero"); }, "/dev/zero: is not a regular file");
}

}  // namespace
}  // namespace ts
