// The reference's GGUF block formats against ggml itself and against hand-built blocks:
//  - tests/data/ggml-gguf/NAME.{f32,q,deq}: source floats, the bytes ggml's quantizer wrote for them
//    and ggml's own dequantization of those bytes (see that folder's README): every dequantizer must
//    reproduce NAME.deq bit for bit, the quantizer NAME.q byte for byte (row 1 is an all-zero block,
//    row 2 has an outlier);
//  - blocks built here value by value from the layouts in ggml-common.h (negative and subnormal f16
//    scales, the 6-bit scale and min fields at 0 and 63, Q6_K's scales at -128 and 127, Q5_K's high
//    bits), decoded to the numbers the layout says;
//  - round trips bounded by each format's step; the ops' validation messages.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "core/backend.h"
#include "core/case_file.h"
#include "core/ops/quant_params.h"
#include "core/quant/formats.h"

namespace ts {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(TOUCHSTONE_SOURCE_DIR) / "tests" / "data" / "ggml-gguf";

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(static_cast<bool>(in)) << "cannot open " << p;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> read_f32(const fs::path& p) {
  const auto b = read_bytes(p);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

// The tensors of tests/data/ggml-gguf in the six kinds (the README's table).
struct GgmlTensor {
  const char* name;
  QuantKind kind;
  int64_t rows, cols;
};
const GgmlTensor kGgmlTensors[] = {
    {"blk.0.attn_q.weight", QuantKind::Q4_K, 48, 512},  {"blk.0.attn_v.weight", QuantKind::Q6_K, 32, 256},
    {"blk.0.ffn_down.weight", QuantKind::Q5_K, 16, 768}, {"blk.0.attn_k.weight", QuantKind::Q8_0, 24, 96},
    {"blk.0.ffn_gate.weight", QuantKind::Q4_0, 20, 160}, {"blk.0.ffn_up.weight", QuantKind::Q4_1, 12, 64},
};

std::string where(const GgmlTensor& g, const quant::Format& f, size_t byte) {
  const int64_t rb = quant::row_bytes(f, g.cols);
  const int64_t row = static_cast<int64_t>(byte) / rb, in_row = static_cast<int64_t>(byte) % rb;
  return fmt::format("{} ({}): row {}, block {}, byte {} of the block", g.name, enum_name(g.kind), row,
                     in_row / f.block_bytes, in_row % f.block_bytes);
}

TEST(QuantFormats, TableIsGgmlsBlockSizes) {
  struct Want {
    QuantKind k;
    int64_t elems, bytes;
  };
  for (const Want& w : {Want{QuantKind::Q4_0, 32, 18}, Want{QuantKind::Q4_1, 32, 20}, Want{QuantKind::Q8_0, 32, 34},
                        Want{QuantKind::Q4_K, 256, 144}, Want{QuantKind::Q5_K, 256, 176}, Want{QuantKind::Q6_K, 256, 210}}) {
    const quant::Format* f = quant::format(w.k);
    ASSERT_NE(f, nullptr) << enum_name(w.k);
    EXPECT_EQ(f->kind, w.k);
    EXPECT_EQ(f->block_elems, w.elems) << enum_name(w.k);
    EXPECT_EQ(f->block_bytes, w.bytes) << enum_name(w.k);
  }
  for (QuantKind k : {QuantKind::F32, QuantKind::F16, QuantKind::BF16}) EXPECT_EQ(quant::format(k), nullptr);
  expect_error([] { quant::block_format(QuantKind::BF16); },
               "parameter 'kind': BF16 is not a GGUF block kind (expected one of Q4_0|Q4_1|Q8_0|Q4_K|Q5_K|Q6_K)");
  EXPECT_EQ(quant::row_bytes(quant::block_format(QuantKind::Q6_K), 768), 630);
}

TEST(QuantGgmlData, DequantizersReproduceGgmlBitForBit) {
  for (const GgmlTensor& g : kGgmlTensors) {
    const quant::Format& f = quant::block_format(g.kind);
    const auto q = read_bytes(kData / (std::string(g.name) + ".q"));
    const auto want = read_f32(kData / (std::string(g.name) + ".deq"));
    ASSERT_EQ(static_cast<int64_t>(q.size()), g.rows * quant::row_bytes(f, g.cols)) << g.name;
    ASSERT_EQ(static_cast<int64_t>(want.size()), g.rows * g.cols) << g.name;
    std::vector<float> got(want.size());
    for (int64_t r = 0; r < g.rows; ++r)
      f.dequantize_row(q.data() + r * quant::row_bytes(f, g.cols), got.data() + r * g.cols, g.cols);
    int64_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (f32_bits(got[i]) != f32_bits(want[i]) && bad++ < 3)
        ADD_FAILURE() << g.name << " (" << enum_name(g.kind) << ") value " << i << " (row " << i / g.cols << ", col "
                      << i % g.cols << "): got " << got[i] << ", ggml " << want[i];
    EXPECT_EQ(bad, 0) << g.name;
  }
}

TEST(QuantGgmlData, QuantizerWritesGgmlsBytes) {
  for (const GgmlTensor& g : kGgmlTensors) {
    const quant::Format& f = quant::block_format(g.kind);
    const auto x = read_f32(kData / (std::string(g.name) + ".f32"));
    const auto want = read_bytes(kData / (std::string(g.name) + ".q"));
    ASSERT_EQ(static_cast<int64_t>(x.size()), g.rows * g.cols) << g.name;
    // Row 1 starts with an all-zero block and row 2 has an outlier: the data says so, check it does.
    for (int64_t c = 0; c < 32; ++c) ASSERT_EQ(x[static_cast<size_t>(g.cols + c)], 0.0f) << g.name;
    std::vector<uint8_t> got(want.size(), 0xA5);
    for (int64_t r = 0; r < g.rows; ++r)
      f.quantize_row(x.data() + r * g.cols, got.data() + r * quant::row_bytes(f, g.cols), g.cols);
    int64_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i] && bad++ < 3)
        ADD_FAILURE() << where(g, f, i) << ": got 0x" << std::hex << int(got[i]) << ", ggml 0x" << int(want[i]) << std::dec;
    EXPECT_EQ(bad, 0) << g.name << ": " << bad << " of " << want.size() << " bytes differ";
  }
}

// The same files through the ops, as a user's case would run them on the reference backend.
TEST(QuantGgmlData, OpsReproduceGgmlThroughTheReferenceBackend) {
  Backend& ref = backend("reference");
  for (const GgmlTensor& g : kGgmlTensors) {
    const quant::Format& f = quant::block_format(g.kind);
    const auto x = read_f32(kData / (std::string(g.name) + ".f32"));
    const auto q = read_bytes(kData / (std::string(g.name) + ".q"));
    const auto deq = read_f32(kData / (std::string(g.name) + ".deq"));

    SafetensorsFile file;
    file.metadata = {{"op", "dequantize"}, {"kind", std::string(enum_name(g.kind))}, {"n_rows", std::to_string(g.rows)},
                     {"n_cols", std::to_string(g.cols)}};
    Tensor bytes(DType::U8, {g.rows, quant::row_bytes(f, g.cols)});
    std::memcpy(bytes.data(), q.data(), q.size());
    file.tensors["bytes"] = bytes;
    const Case dc = case_from_file(file);
    TensorMap io = working_set(dc);
    run_case(ref, dc, io);
    EXPECT_EQ(std::memcmp(io.at("out").data(), deq.data(), deq.size() * 4), 0) << g.name;

    file.metadata["op"] = "quantize";
    file.tensors.clear();
    Tensor xt(DType::F32, {g.rows, g.cols});
    std::memcpy(xt.data(), x.data(), x.size() * 4);
    file.tensors["x"] = xt;
    const Case qc = case_from_file(file);
    io = working_set(qc);
    run_case(ref, qc, io);
    EXPECT_EQ(std::memcmp(io.at("bytes").data(), q.data(), q.size()), 0) << g.name;
  }
}

// --- hand-built blocks ---------------------------------------------------------------------------

void put_f16(std::vector<uint8_t>& b, size_t at, uint16_t h) {
  b[at] = static_cast<uint8_t>(h & 0xff);
  b[at + 1] = static_cast<uint8_t>(h >> 8);
}
// Sets `width` bits of b[byte] starting at bit `bit` (checked to be clear before).
void put_bits(std::vector<uint8_t>& b, size_t byte, int bit, int width, unsigned v) {
  ASSERT_LT(v, 1u << width);
  ASSERT_EQ((b[byte] >> bit) & ((1u << width) - 1), 0u) << "byte " << byte << " bit " << bit << " set twice";
  b[byte] = static_cast<uint8_t>(b[byte] | (v << bit));
}

std::vector<float> decode(QuantKind k, const std::vector<uint8_t>& blocks, int64_t n) {
  std::vector<float> out(static_cast<size_t>(n), std::nanf(""));
  quant::block_format(k).dequantize_row(blocks.data(), out.data(), n);
  return out;
}

// f16 codes used as scales: 2^-24 (the smallest subnormal), 1023 * 2^-24 (the largest subnormal),
// -0.75, 2.5, -2^-14 (the smallest normal, negative), 0.
const uint16_t kScaleCodes[] = {0x0001, 0x03ff, 0xba00, 0x4100, 0x8400, 0x0000};

TEST(QuantHandBuilt, Q4_0AndQ8_0WithNegativeAndSubnormalScales) {
  for (uint16_t dcode : kScaleCodes) {
    const double d = f16_to_f32(dcode);
    std::vector<uint8_t> b(18, 0);
    put_f16(b, 0, dcode);
    for (int i = 0; i < 32; ++i) put_bits(b, 2 + i % 16, i < 16 ? 0 : 4, 4, static_cast<unsigned>((i * 7) % 16));
    const auto got = decode(QuantKind::Q4_0, b, 32);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(got[i], static_cast<float>(((i * 7) % 16 - 8) * d)) << "code " << dcode << " i " << i;

    std::vector<uint8_t> c(34, 0);
    put_f16(c, 0, dcode);
    for (int i = 0; i < 32; ++i) c[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(i == 0 ? -128 : i == 1 ? 127 : i * 9 - 140));
    const auto got8 = decode(QuantKind::Q8_0, c, 32);
    for (int i = 0; i < 32; ++i) {
      const int q = i == 0 ? -128 : i == 1 ? 127 : static_cast<int8_t>(i * 9 - 140);
      EXPECT_EQ(got8[i], static_cast<float>(q * d)) << "code " << dcode << " i " << i;
    }
  }
}

TEST(QuantHandBuilt, Q4_1IsScaleTimesQuantPlusMin) {
  for (uint16_t dcode : kScaleCodes) {
    const uint16_t mcode = 0xc500;  // -5.0
    std::vector<uint8_t> b(20, 0);
    put_f16(b, 0, dcode);
    put_f16(b, 2, mcode);
    for (int i = 0; i < 32; ++i) put_bits(b, 4 + i % 16, i < 16 ? 0 : 4, 4, static_cast<unsigned>((31 - i) % 16));
    const auto got = decode(QuantKind::Q4_1, b, 32);
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(got[i], static_cast<float>((31 - i) % 16 * double(f16_to_f32(dcode)) - 5.0)) << "code " << dcode << " i " << i;
  }
}

// Q4_K and Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins, packed in 12 bytes (ggml-common.h):
// sub-block j < 4 keeps its scale in bits 0-5 of byte j and its min in bits 0-5 of byte j+4;
// sub-block j >= 4 keeps the low 4 bits of its scale in bits 0-3 and of its min in bits 4-7 of byte
// j+4, and their top 2 bits in bits 6-7 of byte j-4 (scale) and of byte j (min).
void put_scales_k4(std::vector<uint8_t>& b, size_t at, const unsigned* sc, const unsigned* m) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      put_bits(b, at + j, 0, 6, sc[j]);
      put_bits(b, at + j + 4, 0, 6, m[j]);
    } else {
      put_bits(b, at + j + 4, 0, 4, sc[j] & 15);
      put_bits(b, at + j + 4, 4, 4, m[j] & 15);
      put_bits(b, at + j - 4, 6, 2, sc[j] >> 4);
      put_bits(b, at + j, 6, 2, m[j] >> 4);
    }
  }
}

const unsigned kSc[8] = {0, 63, 1, 62, 63, 0, 33, 17};
const unsigned kMin[8] = {63, 0, 5, 40, 0, 63, 21, 48};

TEST(QuantHandBuilt, Q4_KScaleAndMinFieldsAt0And63) {
  for (uint16_t dcode : {uint16_t(0x3c00), uint16_t(0x0001), uint16_t(0xb800)}) {  // 1, 2^-24, -0.5
    const uint16_t dmcode = 0x3400;  // 0.25
    std::vector<uint8_t> b(144, 0);
    put_f16(b, 0, dcode);
    put_f16(b, 2, dmcode);
    put_scales_k4(b, 4, kSc, kMin);
    // Value i: sub-block i/32; values [64k, 64k+32) are the low nibbles of qs[32k..], the next 32
    // the high nibbles.
    auto q_of = [](int i) { return (i * 5 + i / 32) % 16; };
    for (int i = 0; i < 256; ++i) put_bits(b, 16 + 32 * (i / 64) + i % 32, (i / 32) % 2 ? 4 : 0, 4, q_of(i));
    const auto got = decode(QuantKind::Q4_K, b, 256);
    const double d = f16_to_f32(dcode), dmin = f16_to_f32(dmcode);
    for (int i = 0; i < 256; ++i)
      EXPECT_EQ(got[i], static_cast<float>(d * kSc[i / 32] * q_of(i) - dmin * kMin[i / 32])) << "code " << dcode << " i " << i;
  }
}

TEST(QuantHandBuilt, Q5_KHighBitsAndScaleFields) {
  for (uint16_t dcode : {uint16_t(0x3c00), uint16_t(0x03ff), uint16_t(0xc000)}) {  // 1, largest subnormal, -2
    const uint16_t dmcode = 0xb400;  // -0.25: a negative dmin adds
    std::vector<uint8_t> b(176, 0);
    put_f16(b, 0, dcode);
    put_f16(b, 2, dmcode);
    put_scales_k4(b, 4, kSc, kMin);
    // 5-bit quants: the low 4 bits as Q4_K's nibbles (qs at byte 48), bit 4 of value i is bit i/32 of
    // qh[i % 32] (qh at byte 16).
    auto q_of = [](int i) { return (i * 11 + 3 * (i / 32)) % 32; };
    for (int i = 0; i < 256; ++i) {
      put_bits(b, 48 + 32 * (i / 64) + i % 32, (i / 32) % 2 ? 4 : 0, 4, q_of(i) & 15);
      put_bits(b, 16 + i % 32, i / 32, 1, q_of(i) >> 4);
    }
    const auto got = decode(QuantKind::Q5_K, b, 256);
    const double d = f16_to_f32(dcode), dmin = f16_to_f32(dmcode);
    int high = 0;
    for (int i = 0; i < 256; ++i) {
      high += q_of(i) >= 16;
      EXPECT_EQ(got[i], static_cast<float>(d * kSc[i / 32] * q_of(i) - dmin * kMin[i / 32])) << "code " << dcode << " i " << i;
    }
    EXPECT_GT(high, 100);  // the high bit is exercised in every sub-block
  }
}

TEST(QuantHandBuilt, Q6_KSignedScalesAtMinus128And127) {
  const int kScales[16] = {-128, 127, 0, 1, -1, 64, -64, 100, -100, 127, -128, 3, -7, 50, -50, 31};
  for (uint16_t dcode : {uint16_t(0x3c00), uint16_t(0x0001), uint16_t(0xb555)}) {  // 1, 2^-24, about -0.333
    std::vector<uint8_t> b(210, 0);
    put_f16(b, 208, dcode);
    for (int s = 0; s < 16; ++s) b[192 + s] = static_cast<uint8_t>(static_cast<int8_t>(kScales[s]));
    // 6-bit quants (value q - 32). In each half of 128 values, quarter g = 0..3 and lane l = 0..31:
    // low 4 bits in ql[64*half + l + 32*(g % 2)], low nibble for g < 2, high nibble for g >= 2; the
    // top 2 bits in bits 2g, 2g+1 of qh[32*half + l].
    auto q_of = [](int i) { return i == 0 ? 0 : i == 1 ? 63 : (i * 13 + i / 16) % 64; };
    for (int i = 0; i < 256; ++i) {
      const int half = i / 128, g = (i % 128) / 32, l = i % 32;
      put_bits(b, 64 * half + l + 32 * (g % 2), g < 2 ? 0 : 4, 4, q_of(i) & 15);
      put_bits(b, 128 + 32 * half + l, 2 * g, 2, q_of(i) >> 4);
    }
    const auto got = decode(QuantKind::Q6_K, b, 256);
    const double d = f16_to_f32(dcode);
    for (int i = 0; i < 256; ++i)
      EXPECT_EQ(got[i], static_cast<float>(d * kScales[i / 16] * (q_of(i) - 32))) << "code " << dcode << " i " << i;
  }
}

// Known encodings: Q8_0 rounds halves away from zero (roundf), Q4_0 rounds by +8.5 and truncation
// (halves up) and maps the value of largest magnitude to level 0; an all-zero block has d = 0.
TEST(QuantHandBuilt, KnownEncodingsAndTheirRounding) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127;  // amax 127: d = 1 exactly
  const float halves[] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 126.5f};
  const int8_t want[] = {1, 2, 3, -1, -3, 127};
  for (int i = 0; i < 6; ++i) x[1 + i] = halves[i];
  std::vector<uint8_t> q(34);
  quant::block_format(QuantKind::Q8_0).quantize_row(x.data(), q.data(), 32);
  EXPECT_EQ(q[0] | q[1] << 8, 0x3c00);  // f16 1.0
  EXPECT_EQ(static_cast<int8_t>(q[2]), 127);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(static_cast<int8_t>(q[3 + i]), want[i]) << halves[i];

  // Q4_0: the largest magnitude is -8 (negative), so d = 1 and value v sits at level v + 8.
  std::vector<float> y(32, 0.0f);
  y[0] = -8;
  y[1] = 7;
  y[2] = 0.5f;   // level 8.5 + 0.5 = 9 (a half rounds up)
  y[3] = -0.5f;  // 8
  y[17] = 7.9f;  // capped at 15
  std::vector<uint8_t> b(18);
  quant::block_format(QuantKind::Q4_0).quantize_row(y.data(), b.data(), 32);
  EXPECT_EQ(b[0] | b[1] << 8, 0x3c00);
  EXPECT_EQ(b[2] & 0xF, 0);
  EXPECT_EQ(b[3] & 0xF, 15);
  EXPECT_EQ(b[4] & 0xF, 9);
  EXPECT_EQ(b[5] & 0xF, 8);
  EXPECT_EQ(b[3] >> 4, 15);  // value 17
  EXPECT_EQ(b[2] >> 4, 8);   // value 16: zero

  std::vector<float> zeros(256, 0.0f);
  for (QuantKind k : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K}) {
    const quant::Format& f = quant::block_format(k);
    std::vector<uint8_t> z(static_cast<size_t>(quant::row_bytes(f, 256)), 0xA5);
    f.quantize_row(zeros.data(), z.data(), 256);
    std::vector<float> back(256, 1.0f);
    f.dequantize_row(z.data(), back.data(), 256);
    for (int i = 0; i < 256; ++i) EXPECT_EQ(back[i], 0.0f) << enum_name(k) << " " << i;
  }
}

// --- round trips ---------------------------------------------------------------------------------

// The step of value i's (sub-)block, as decoded from the bytes: the difference between adjacent
// levels.
double step_of(QuantKind k, const uint8_t* row, int64_t i) {
  const quant::Format& f = quant::block_format(k);
  const uint8_t* blk = row + (i / f.block_elems) * f.block_bytes;
  const int64_t j = i % f.block_elems;
  auto f16 = [](const uint8_t* p) { return double(f16_to_f32(static_cast<uint16_t>(p[0] | p[1] << 8))); };
  switch (k) {
    case QuantKind::Q4_0:
    case QuantKind::Q4_1:
    case QuantKind::Q8_0: return std::fabs(f16(blk));
    case QuantKind::Q4_K:
    case QuantKind::Q5_K: {
      const int s = static_cast<int>(j / 32);
      const uint8_t* q = blk + 4;
      const unsigned sc = s < 4 ? q[s] & 63 : (q[s + 4] & 15) | ((q[s - 4] >> 6) << 4);
      return std::fabs(f16(blk)) * sc;
    }
    case QuantKind::Q6_K: return std::fabs(f16(blk + 208) * static_cast<int8_t>(blk[192 + j / 16]));
    default: return 0;
  }
}

TEST(QuantRoundTrip, ErrorWithinOneStepOfItsBlock) {
  for (QuantKind k : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K}) {
    const quant::Format& f = quant::block_format(k);
    const int64_t n = 4 * 256;
    Rng r(42);
    for (double sigma : {0.02, 1.0, 300.0}) {
      // These sigmas keep the f16 scales normal; far below (sigma ~1e-4) d goes subnormal and the
      // step itself is coarse, in ggml as here.
      std::vector<float> x(n);
      for (auto& v : x) v = static_cast<float>(sigma * r.normal());
      std::vector<uint8_t> q(static_cast<size_t>(quant::row_bytes(f, n)));
      f.quantize_row(x.data(), q.data(), n);
      std::vector<float> y(n);
      f.dequantize_row(q.data(), y.data(), n);
      double worst = 0, sum2 = 0, step2 = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double step = step_of(k, q.data(), i);
        const double err = std::fabs(double(x[i]) - y[i]);
        // One step: a value is rounded to its nearest level (half a step), except at the end of the
        // range that the scale search may cut (ggml's fits trade the extremes for the bulk; Q4_0 and
        // Q4_1 cap the far end at 15). The f16 scale's rounding (2^-11 of up to 63 levels) on top.
        EXPECT_LE(err, step * (1 + 63 * 0x1p-11)) << enum_name(k) << " sigma " << sigma << " value " << i << " x " << x[i]
                                                   << " got " << y[i] << " step " << step;
        worst = std::max(worst, err / step);
        sum2 += err * err;
        step2 += step * step;
      }
      // In the bulk, rounding to the nearest level: RMS error near step/sqrt(12) ~ 0.29 step.
      EXPECT_LT(std::sqrt(sum2 / step2), 0.4) << enum_name(k) << " sigma " << sigma << " worst " << worst;
    }
  }
}

// --- validation ----------------------------------------------------------------------------------

SafetensorsFile quant_file(const char* op, const char* kind, int64_t rows, int64_t cols) {
  SafetensorsFile f;
  f.metadata = {{"op", op}, {"kind", kind}, {"n_rows", std::to_string(rows)}, {"n_cols", std::to_string(cols)}};
  return f;
}

TEST(QuantValidation, OneLineErrorsNamingWhatWasExpected) {
  const Op& deq = op_or_throw("dequantize");
  const Op& qnt = op_or_throw("quantize");
  for (const Op* op : {&deq, &qnt}) {
    expect_error([&] { op->parse({{"kind", "F16"}, {"n_rows", "1"}, {"n_cols", "32"}}); },
                 "parameter 'kind': F16 is not a GGUF block kind (expected one of Q4_0|Q4_1|Q8_0|Q4_K|Q5_K|Q6_K)");
    expect_error([&] { op->parse({{"kind", "Q4_K"}, {"n_rows", "1"}, {"n_cols", "320"}}); },
                 "parameter 'n_cols': 320 is not a positive multiple of Q4_K's block of 256 values");
    expect_error([&] { op->parse({{"kind", "Q8_0"}, {"n_rows", "2"}, {"n_cols", "0"}}); },
                 "parameter 'n_cols': 0 is not a positive multiple of Q8_0's block of 32 values");
    expect_error([&] { op->parse({{"kind", "Q8_0"}, {"n_rows", "1"}, {"n_cols", "9223372036854775776"}}); },
                 "parameter 'n_cols': 9223372036854775776 values of Q8_0 are more bytes than a tensor can hold");
    expect_error([&] { op->parse({{"kind", "Q8_0"}, {"n_rows", "0"}, {"n_cols", "32"}}); },
                 "parameter 'n_rows' must be positive");
    expect_error([&] { op->parse({{"kind", "Q9_K"}, {"n_rows", "1"}, {"n_cols", "32"}}); }, "'Q9_K' is not a weight kind");
  }
  // Bytes rows that do not hold n_cols values of the kind.
  SafetensorsFile f = quant_file("dequantize", "Q4_K", 2, 512);
  f.tensors["bytes"] = Tensor(DType::U8, {2, 290});
  expect_error([&] { case_from_file(f); }, "tensor 'bytes': rows of 290 bytes, expected 288 (512 Q4_K values = 2 blocks of 144 bytes)");
  f.tensors["bytes"] = Tensor(DType::U8, {3, 288});
  expect_error([&] { case_from_file(f); }, "tensor 'bytes' has shape [3,288], the parameters need [2,288]");
  f.tensors["bytes"] = Tensor(DType::F32, {2, 288});
  expect_error([&] { case_from_file(f); }, "tensor 'bytes' has dtype F32, expected U8 (pinned by the catalog)");
  f.tensors["bytes"] = Tensor(DType::U8, {2, 288});
  EXPECT_NO_THROW(case_from_file(f));
  // quantize's source must be finite.
  SafetensorsFile g = quant_file("quantize", "Q8_0", 1, 32);
  g.tensors["x"] = Tensor(DType::F32, {1, 32});
  g.tensors["x"].set(5, std::numeric_limits<double>::infinity());
  expect_error([&] { case_from_file(g); }, "tensor 'x': element 5 is inf; quantize takes finite values");
  g.tensors["x"].set(5, 1.0);
  EXPECT_NO_THROW(case_from_file(g));
  g.tensors["expected.bytes"] = Tensor(DType::U8, {1, 30});
  expect_error([&] { case_from_file(g); }, "expected.bytes: U8 [1,30], the op produces U8 [1,34]");
}

// The generators write what the formats allow: the dequantize cases decode to finite values, and
// F16 / BF16 sources quantize as their values widened to F32.
TEST(QuantCases, GeneratedBlocksDecodeToFiniteValues) {
  const Op& deq = op_or_throw("dequantize");
  for (const CaseSpec& spec : deq.cases()) {
    if (spec.tier > Tier::Ci) continue;
    const Case c = generate_case(deq, spec.params, DType::F32, case_seed(deq, spec.name, DType::F32));
    const Tensor& out = c.expected.at("out");
    for (int64_t i = 0; i < out.numel(); ++i) ASSERT_TRUE(std::isfinite(out.get(i))) << spec.name << " value " << i;
  }
  const Op& qnt = op_or_throw("quantize");
  const QuantRowsParams p{QuantKind::Q4_K, 3, 512};
  const Case h = generate_case(qnt, Params::of(p), DType::BF16, 7);
  std::vector<float> x(3 * 512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(h.tensors.at("x").get(static_cast<int64_t>(i)));
  std::vector<uint8_t> want(3 * 288);
  for (int r = 0; r < 3; ++r) quant::block_format(p.kind).quantize_row(x.data() + r * 512, want.data() + r * 288, 512);
  EXPECT_EQ(std::memcmp(h.expected.at("bytes").data(), want.data(), want.size()), 0);
}

}  // namespace
}  // namespace ts
