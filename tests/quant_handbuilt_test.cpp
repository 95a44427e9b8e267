// Hand-built quantized weights with known values, on every backend. Each block is encoded here from
// chosen integer codes and scales, following the byte layouts of ggml-common.h and the packings of
// AutoGPTQ and AutoAWQ (an encoder written from the formats, independent of the decoders under test);
// the expected weights are the formulas in double. The edges the decoders must get right: negative
// and subnormal f16 scales, the 6-bit packed scale / min fields of Q4_K and Q5_K at 0 and 63 (whose
// top two bits live in other bytes), Q6_K's signed scales at -128 and 127, Q5_K's and Q6_K's high
// bits, a GPTQ zero field of all ones (it decodes as 2^bits), AWQ's nibble order.
//
// Every backend runs the weights through gemm_quant / gemm_gptq / gemm_awq twice: with the identity
// as activations (out = the weights themselves, the prefill path) and with one random row (the
// decode path); the reference must reproduce the weights exactly.
#include <array>
#include <cstring>
#include <functional>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conformance/check.h"
#include "core/dtype.h"
#include "core/ops/quant_params.h"
#include "core/rng.h"

namespace ts {
namespace {

// A weight matrix as both sides see it: the bytes (or int32 words) the backends read and the values
// they must decode to, W[r][c] with r the output row.
struct HandWeight {
  std::vector<uint8_t> bytes;
  std::vector<std::vector<double>> w;
};

void put_f16(std::vector<uint8_t>& b, uint16_t h) {
  b.push_back(static_cast<uint8_t>(h & 0xff));
  b.push_back(static_cast<uint8_t>(h >> 8));
}

// Scales: two negative ones (one subnormal: f16 0x83ff is -(1023 / 1024) 2^-14), two positive ones
// (one the smallest subnormal, 2^-24). Weights stay within the GEMMs' tolerance bound (|w| <= 8).
constexpr std::array<uint16_t, 4> kScales = {0x83ff, 0xa000 /* -2^-7 */, 0x0001, 0x2000 /* 2^-7 */};
double f16(uint16_t h) { return f16_to_f32(h); }

// Q4_0 {d, qs[16]}: value i < 16 is the low nibble of qs[i], value 16 + i its high nibble; w = d (q - 8).
HandWeight q4_0(int rows) {
  HandWeight h;
  for (int r = 0; r < rows; ++r) {
    h.w.emplace_back();
    for (int b = 0; b < 2; ++b) {
      const uint16_t d = kScales[(r + b) % 4];
      int q[32];
      for (int i = 0; i < 32; ++i) q[i] = (i * 7 + r + b) % 16;
      put_f16(h.bytes, d);
      for (int i = 0; i < 16; ++i) h.bytes.push_back(static_cast<uint8_t>(q[i] | q[i + 16] << 4));
      for (int i = 0; i < 32; ++i) h.w.back().push_back(f16(d) * (q[i] - 8));
    }
  }
  return h;
}

// Q4_1 {d, m, qs[16]}: nibbles as Q4_0; w = d q + m.
HandWeight q4_1(int rows) {
  HandWeight h;
  for (int r = 0; r < rows; ++r) {
    h.w.emplace_back();
    for (int b = 0; b < 2; ++b) {
      const uint16_t d = kScales[(r + b) % 4], m = kScales[(r + b + 1) % 4];
      int q[32];
      for (int i = 0; i < 32; ++i) q[i] = (i * 5 + 3 * r + b) % 16;
      put_f16(h.bytes, d);
      put_f16(h.bytes, m);
      for (int i = 0; i < 16; ++i) h.bytes.push_back(static_cast<uint8_t>(q[i] | q[i + 16] << 4));
      for (int i = 0; i < 32; ++i) h.w.back().push_back(f16(d) * q[i] + f16(m));
    }
  }
  return h;
}

// Q8_0 {d, qs[32] int8}: w = d q, q from -128 to 127.
HandWeight q8_0(int rows) {
  HandWeight h;
  for (int r = 0; r < rows; ++r) {
    h.w.emplace_back();
    for (int b = 0; b < 2; ++b) {
      const uint16_t d = b == 0 ? kScales[r % 4] : 0xa800 /* -2^-5 */;
      put_f16(h.bytes, d);
      for (int i = 0; i < 32; ++i) {
        const int q = i == 0 ? -128 : i == 1 ? 127 : (i * 37 + r * 11 + b) % 256 - 128;
        h.bytes.push_back(static_cast<uint8_t>(static_cast<int8_t>(q)));
        h.w.back().push_back(f16(d) * q);
      }
    }
  }
  return h;
}

// The 12 bytes holding Q4_K's / Q5_K's eight 6-bit scales and mins: sub-blocks 0-3 keep their low six
// bits in bytes 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 keep their low four bits in the nibbles of
// bytes 8-11 and their top two bits in the top bits of bytes 0-3 (scales) and 4-7 (mins).
std::array<uint8_t, 12> pack_scales_mins(const int sc[8], const int m[8]) {
  std::array<uint8_t, 12> s{};
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
    s[j + 4] = static_cast<uint8_t>(m[j] | (m[j + 4] >> 4) << 6);
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
  }
  return s;
}

// Q4_K {d, dmin, scales[12], qs[128]} and Q5_K {d, dmin, scales[12], qh[32], qs[128]}: 256 values in
// four chunks of 64; chunk c's values 64c + l take the low nibbles of qs[32c + l] (sub-block 2c), its
// values 64c + 32 + l the high nibbles (sub-block 2c + 1); Q5_K adds 16 where bit 2c (resp. 2c + 1) of
// qh[l] is set. w = d sc q - dmin m. Scales and mins at 0, 63 and the values around the 4-bit split.
HandWeight k_quant(int rows, bool five_bit) {
  HandWeight h;
  const int bits = five_bit ? 5 : 4;
  for (int r = 0; r < rows; ++r) {
    int sc[8] = {63, 0, 63, 1, 15, 16, 62, 47}, m[8] = {0, 63, 63, 16, 15, 1, 48, 63};
    if (r % 2) std::swap(sc, m);
    const uint16_t d = kScales[(r + 2) % 4] == 0x0001 ? 0x1c00 /* 2^-8 */ : kScales[(r + 2) % 4];
    const uint16_t dmin = kScales[(r + 1) % 4];
    // The scale bound keeps |w| <= 8: 63 x 31 x 2^-8 < 8.
    const double dd = five_bit ? f16(d) * 0.5 : f16(d);
    const uint16_t d_stored = five_bit ? f32_to_f16(static_cast<float>(dd)) : d;
    int q[256];
    for (int i = 0; i < 256; ++i) q[i] = (i * 13 + r * 7) % (1 << bits);
    q[0] = 0, q[1] = (1 << bits) - 1;
    put_f16(h.bytes, d_stored);
    put_f16(h.bytes, dmin);
    const auto s = pack_scales_mins(sc, m);
    h.bytes.insert(h.bytes.end(), s.begin(), s.end());
    if (five_bit)
      for (int l = 0; l < 32; ++l) {
        uint8_t hb = 0;
        for (int c = 0; c < 4; ++c) hb |= static_cast<uint8_t>((q[64 * c + l] >> 4) << (2 * c) | (q[64 * c + 32 + l] >> 4) << (2 * c + 1));
        h.bytes.push_back(hb);
      }
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) h.bytes.push_back(static_cast<uint8_t>((q[64 * c + l] & 15) | (q[64 * c + 32 + l] & 15) << 4));
    h.w.emplace_back();
    for (int i = 0; i < 256; ++i) h.w.back().push_back(f16(d_stored) * sc[i / 32] * q[i] - f16(dmin) * m[i / 32]);
  }
  return h;
}

// Q6_K {ql[128], qh[64], scales[16] int8, d}: two halves of 128; in half n, for l < 32, values l, l+32,
// l+64, l+96 take the low nibble of ql[64n + l], the low nibble of ql[64n + l + 32], the high nibble of
// ql[64n + l], the high nibble of ql[64n + l + 32], and bits 0-1, 2-3, 4-5, 6-7 of qh[32n + l] above
// them; scale sc[8n + l / 16 + 2 j] for the j-th of the four. w = d sc (q - 32).
HandWeight q6_k(int rows) {
  HandWeight h;
  for (int r = 0; r < rows; ++r) {
    int8_t sc[16] = {-128, 127, 0, -1, 1, 64, -64, 100, 127, -128, 5, -5, 33, -33, 90, -90};
    if (r % 2) std::reverse(sc, sc + 16);
    const uint16_t d = r % 2 ? 0x93ff /* about -2^-10 */ : 0x1400 /* 2^-10 */;
    int q[256];
    for (int i = 0; i < 256; ++i) q[i] = (i * 29 + r) % 64;
    q[0] = 0, q[1] = 63;
    uint8_t ql[128] = {}, qh[64] = {};
    for (int n = 0; n < 2; ++n)
      for (int l = 0; l < 32; ++l)
        for (int j = 0; j < 4; ++j) {
          const int v = q[128 * n + 32 * j + l];
          const int lo = 64 * n + l + (j % 2) * 32;
          ql[lo] |= static_cast<uint8_t>((v & 15) << (j >= 2 ? 4 : 0));
          qh[32 * n + l] |= static_cast<uint8_t>((v >> 4) << (2 * j));
        }
    h.bytes.insert(h.bytes.end(), ql, ql + 128);
    h.bytes.insert(h.bytes.end(), qh, qh + 64);
    for (int8_t s : sc) h.bytes.push_back(static_cast<uint8_t>(s));
    put_f16(h.bytes, d);
    h.w.emplace_back();
    for (int i = 0; i < 256; ++i) {
      const int n = i / 128, j = (i % 128) / 32, l = i % 32;
      h.w.back().push_back(f16(d) * sc[8 * n + l / 16 + 2 * j] * (q[i] - 32));
    }
  }
  return h;
}

// AutoGPTQ's packing (bits b, p = 32 / b): code (k, j) in qweight[k / p][j] at bit b (k % p); zero
// (g, j) stored minus one in qzeros[g][j / p] at bit b (j % p). A stored field of all ones decodes as
// 2^b. Returns {qweight, qzeros, scales (f16 bits), W[k][n]}.
struct Packed {
  std::vector<int32_t> qweight, qzeros;
  std::vector<uint16_t> scales;
  std::vector<std::vector<double>> w;  // [k][n]
};

Packed gptq(int64_t bits, int64_t k, int64_t n, int64_t gs, const std::vector<int32_t>& g_idx) {
  const int64_t p = 32 / bits, groups = k / gs, mask = (1 << bits) - 1;
  Packed out;
  out.qweight.assign(static_cast<size_t>(k / p * n), 0);
  out.qzeros.assign(static_cast<size_t>(groups * n / p), 0);
  std::vector<int64_t> stored(static_cast<size_t>(groups * n));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t z = (g + j) % 3 == 0 ? mask : (g * 5 + j * 3) % (mask + 1);  // all ones every third
      stored[static_cast<size_t>(g * n + j)] = z;
      out.qzeros[static_cast<size_t>(g * (n / p) + j / p)] |= static_cast<int32_t>(static_cast<uint32_t>(z) << (bits * (j % p)));
      out.scales.push_back(f32_to_f16(static_cast<float>(((g + 2 * j) % 4 - 1.5) / static_cast<double>(mask + 1))));
    }
  out.w.assign(static_cast<size_t>(k), std::vector<double>(static_cast<size_t>(n)));
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) {
      const int64_t q = (kk * 7 + j * 3) % (mask + 1), g = g_idx.empty() ? kk / gs : g_idx[static_cast<size_t>(kk)];
      out.qweight[static_cast<size_t>(kk / p * n + j)] |= static_cast<int32_t>(static_cast<uint32_t>(q) << (bits * (kk % p)));
      out.w[static_cast<size_t>(kk)][static_cast<size_t>(j)] =
          f16(out.scales[static_cast<size_t>(g * n + j)]) * static_cast<double>(q - (stored[static_cast<size_t>(g * n + j)] + 1));
    }
  return out;
}

// AutoAWQ's GEMM packing: the eight 4-bit values of columns 8c .. 8c+7 go into the int32 in the column
// order 0 2 4 6 1 3 5 7 (slot i holds column kOrder[i]), for qweight [k][n / 8] and qzeros alike; zeros
// are stored as they are.
Packed awq(int64_t k, int64_t n, int64_t gs) {
  constexpr int kOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  const int64_t groups = k / gs;
  Packed out;
  const auto pack = [&](std::vector<int32_t>& dst, int64_t rows, const std::function<int64_t(int64_t, int64_t)>& v) {
    dst.assign(static_cast<size_t>(rows * n / 8), 0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < n / 8; ++c)
        for (int i = 0; i < 8; ++i)
          dst[static_cast<size_t>(r * (n / 8) + c)] |= static_cast<int32_t>(static_cast<uint32_t>(v(r, 8 * c + kOrder[i])) << (4 * i));
  };
  const auto code = [](int64_t kk, int64_t j) { return (kk * 3 + j * 5 + j / 8) % 16; };
  const auto zero = [](int64_t g, int64_t j) { return (g * 7 + j) % 16; };
  pack(out.qweight, k, code);
  pack(out.qzeros, groups, zero);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t j = 0; j < n; ++j) out.scales.push_back(f32_to_f16(static_cast<float>(((j % 5) - 2.0) / 16)));
  out.w.assign(static_cast<size_t>(k), std::vector<double>(static_cast<size_t>(n)));
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j)
      out.w[static_cast<size_t>(kk)][static_cast<size_t>(j)] =
          f16(out.scales[static_cast<size_t>(kk / gs * n + j)]) * static_cast<double>(code(kk, j) - zero(kk / gs, j));
  return out;
}

template <class T> void fill(Tensor& t, const std::vector<T>& v) {
  ASSERT_EQ(t.nbytes(), v.size() * sizeof(T)) << "hand-built tensor of the wrong size";
  std::memcpy(t.data(), v.data(), t.nbytes());
}

// Activations for a weight of k inputs: the identity (m = k: out[i][j] = W[i][j] as the GEMM's
// [k, n] weight, the prefill path) or one random row (m = 1, the decode path).
std::vector<double> activations(int64_t m, int64_t k) {
  std::vector<double> a(static_cast<size_t>(m * k));
  Rng r(17);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < k; ++c) a[static_cast<size_t>(i * k + c)] = m == 1 ? r.normal() : (i == c ? 1.0 : 0.0);
  return a;
}

// out[i][j] = sum_c a[i][c] W[c][j] in double (W as [k][n]).
std::vector<double> product(const std::vector<double>& a, const std::vector<std::vector<double>>& w, int64_t m) {
  const int64_t k = static_cast<int64_t>(w.size()), n = static_cast<int64_t>(w[0].size());
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t c = 0; c < k; ++c) s += a[static_cast<size_t>(i * k + c)] * w[static_cast<size_t>(c)][static_cast<size_t>(j)];
      out[static_cast<size_t>(i * n + j)] = s;
    }
  return out;
}

std::vector<std::vector<double>> transpose(const std::vector<std::vector<double>>& w) {
  std::vector<std::vector<double>> t(w[0].size(), std::vector<double>(w.size()));
  for (size_t r = 0; r < w.size(); ++r)
    for (size_t c = 0; c < w[0].size(); ++c) t[c][r] = w[r][c];
  return t;
}

// A case of `op` whose inputs `set` writes, expecting out = a @ W (W as [k][n]), at m = k and m = 1.
using Setter = std::function<void(Case&)>;
std::vector<Case> cases(const std::string& op, const std::function<Params(int64_t m)>& params,
                        const std::vector<std::vector<double>>& w, const Setter& set) {
  std::vector<Case> out;
  const int64_t k = static_cast<int64_t>(w.size());
  for (int64_t m : {k, int64_t{1}}) {
    Case c = generate_case(op_or_throw(op), params(m), DType::F32, 3);
    set(c);
    const std::vector<double> a = activations(m, k);
    from_f64(c.tensors.at("a"), a);
    from_f64(c.expected.at("out"), product(a, w, m));
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> gguf_cases(QuantKind kind, const HandWeight& h) {
  const int64_t rows = static_cast<int64_t>(h.w.size()), cols = static_cast<int64_t>(h.w[0].size());
  return cases("gemm_quant", [&](int64_t m) { return Params::of(GemmQuantParams{kind, m, rows, cols}); }, transpose(h.w),
               [&](Case& c) { fill(c.tensors.at("weight"), h.bytes); });
}

std::vector<Case> gptq_cases(int64_t bits, bool act) {
  const int64_t k = 128, n = 16, gs = 32;
  std::vector<int32_t> g_idx;
  if (act)
    for (int64_t i = 0; i < k; ++i) g_idx.push_back(static_cast<int32_t>((i * 5) % 4));  // 32 rows per group, interleaved
  const Packed pk = gptq(bits, k, n, gs, g_idx);
  return cases("gemm_gptq", [&](int64_t m) { return Params::of(GptqParams{bits, gs, m, k, n, act}); }, pk.w, [=](Case& c) {
    fill(c.tensors.at("qweight"), pk.qweight);
    fill(c.tensors.at("qzeros"), pk.qzeros);
    fill(c.tensors.at("scales"), pk.scales);
    if (act) fill(c.tensors.at("g_idx"), g_idx);
  });
}

std::vector<Case> awq_cases() {
  const int64_t k = 64, n = 24, gs = 32;
  const Packed pk = awq(k, n, gs);
  return cases("gemm_awq", [&](int64_t m) { return Params::of(AwqParams{4, gs, m, k, n}); }, pk.w, [=](Case& c) {
    fill(c.tensors.at("qweight"), pk.qweight);
    fill(c.tensors.at("qzeros"), pk.qzeros);
    fill(c.tensors.at("scales"), pk.scales);
  });
}

std::vector<std::pair<std::string, std::vector<Case>>> all_cases() {
  return {{"Q4_0", gguf_cases(QuantKind::Q4_0, q4_0(3))},        {"Q4_1", gguf_cases(QuantKind::Q4_1, q4_1(3))},
          {"Q8_0", gguf_cases(QuantKind::Q8_0, q8_0(3))},        {"Q4_K", gguf_cases(QuantKind::Q4_K, k_quant(4, false))},
          {"Q5_K", gguf_cases(QuantKind::Q5_K, k_quant(4, true))}, {"Q6_K", gguf_cases(QuantKind::Q6_K, q6_k(3))},
          {"gptq4", gptq_cases(4, false)},                        {"gptq8", gptq_cases(8, false)},
          {"gptq4_act", gptq_cases(4, true)},                     {"awq", awq_cases()}};
}

// The reference decodes every hand-built weight exactly: with the identity as activations its output
// is the weight matrix itself, bit for bit.
TEST(QuantHandBuiltWeights, ReferenceDecodesExactly) {
  for (const auto& [name, cs] : all_cases()) {
    const Case& c = cs[0];
    TensorMap io = working_set(c);
    run_case(backend("reference"), *c.op, c.params, io);
    const std::vector<double> got = to_f64(io.at("out")), want = to_f64(c.expected.at("out"));
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << name << " element " << i;
  }
}

class QuantHandBuiltWeightsOn : public ::testing::TestWithParam<std::string> {};

// Every backend, through both paths, within the op's tolerance; a backend without a kernel for the
// kind says so and the case is listed, not judged.
TEST_P(QuantHandBuiltWeightsOn, DecodesKnownValues) {
  Backend& b = backend(GetParam());
  const Availability av = b.availability();
  if (!av.ok) GTEST_SKIP() << GetParam() << " unavailable: " << av.detail;
  std::string unsupported;
  int judged = 0;
  for (const auto& [name, cs] : all_cases())
    for (size_t i = 0; i < cs.size(); ++i) {
      const Case& c = cs[i];
      if (const Support s = b.supports(c); !s.ok) {
        unsupported += fmt::format(" {}/{} ({})", name, i == 0 ? "identity" : "m1", s.reason);
        continue;
      }
      ++judged;
      const Verdict v = check_case(b, c, false);
      EXPECT_TRUE(v.pass) << GetParam() << " " << name << "\n" << v.describe(true);
    }
  // A backend that runs none of them is a skip with its reasons, never a silent pass.
  if (judged == 0) GTEST_SKIP() << GetParam() << " runs no hand-built case:" << unsupported;
  if (!unsupported.empty()) std::cout << GetParam() << " does not support:" << unsupported << "\n";
}

INSTANTIATE_TEST_SUITE_P(Backends, QuantHandBuiltWeightsOn, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ts
