#include "core/device_roofs.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace ts {

namespace {

// A word pattern no two neighbours share, so a skipped or repeated vector changes the sum.
uint32_t pattern(uint64_t i) { return static_cast<uint32_t>(i * 2654435761u) ^ 0x9e3779b9u; }

}  // namespace

const char* roof_name(Roof r) {
  switch (r) {
    case Roof::read: return "device_read";
    case Roof::copy: return "device_copy";
    case Roof::fma_f32: return "device_fma_f32";
    case Roof::fma_f16: return "device_fma_f16";
  }
  return "?";
}

float fma_chain_start(int c) { return -0.25f * static_cast<float>(c); }

RoofCase make_stream_roof(Roof r, uint64_t bytes, uint32_t windows, uint64_t lanes) {
  check(r == Roof::read || r == Roof::copy, "make_stream_roof: {} is not a stream", roof_name(r));
  check(bytes % (16ull * windows) == 0 && windows > 0 && lanes > 0,
        "make_stream_roof: {} bytes do not split into {} windows of whole 16-byte vectors", bytes, windows);
  RoofCase c;
  c.roof = r;
  c.words = bytes / 4;
  c.windows = windows;
  c.lanes = lanes;
  Tensor x(DType::U32, {static_cast<int64_t>(c.words)});
  uint32_t* w = x.as<uint32_t>();
  uint32_t sum = 0;
  for (uint64_t i = 0; i < c.words; ++i) sum += (w[i] = pattern(i));
  c.expect_sum = sum;
  c.io.emplace("x", std::move(x));
  if (r == Roof::read) {
    c.io.emplace("part", Tensor(DType::U32, {static_cast<int64_t>(lanes * windows)}));
    c.outputs = {"part"};
    c.bytes = static_cast<double>(bytes);
  } else {
    c.io.emplace("y", Tensor(DType::U32, {static_cast<int64_t>(c.words)}));
    c.outputs = {"y"};
    c.bytes = 2.0 * static_cast<double>(bytes);  // read x, write y
  }
  return c;
}

RoofCase make_fma_roof(Roof r, uint64_t lanes, uint32_t rounds) {
  check(r == Roof::fma_f32 || r == Roof::fma_f16, "make_fma_roof: {} is not an FMA roof", roof_name(r));
  RoofCase c;
  c.roof = r;
  c.lanes = lanes;
  c.rounds = rounds;
  c.io.emplace("out", Tensor(DType::F32, {static_cast<int64_t>(lanes)}));
  c.io.at("out").fill(NAN);  // a lane that never wrote stays NaN
  c.outputs = {"out"};
  c.flops = 2.0 * kFmaChains * static_cast<double>(rounds) * static_cast<double>(lanes);
  if (r == Roof::fma_f32) {
    // acc -> acc (1 - 2^-10) + 2^-10 approaches 1 by a factor (1 - 2^-10) a step, so the result still
    // depends on how many steps ran (after 8192, the start's distance to 1 times 3.4e-4). Each step's
    // rounding is at most an ulp and shrinks by the same factor, so a device that rounds the product
    // separately stays within 1024 ulps of the fused result: far inside the tolerance.
    c.mul = 1.0f - 0x1p-10f;
    c.add = 0x1p-10f;
    double sum = 0;
    for (int k = 0; k < kFmaChains; ++k) {
      float acc = fma_chain_start(k);
      for (uint32_t i = 0; i < rounds; ++i) acc = std::fma(acc, c.mul, c.add);
      sum += acc;
    }
    c.expect_lane = static_cast<float>(sum);
    c.tolerance = 0.05f;
  } else {
    // In F16 a slow approach stalls where a step is below half an ulp, at a point that depends on
    // how the device rounds: acc -> acc / 2 + 1 / 2 reaches 1 exactly (ties to even) within a few
    // dozen steps however it rounds, and stays there.
    check(rounds >= 64, "make_fma_roof: F16 chains need at least 64 rounds to reach 1, not {}", rounds);
    c.mul = 0.5f;
    c.add = 0.5f;
    c.expect_lane = static_cast<float>(kFmaChains);
    c.tolerance = 0.05f;
  }
  return c;
}

std::string check_roof(const RoofCase& c) {
  for (const auto& [name, t] : c.io)
    if (!t.guards_intact()) return fmt::format("{}: the kernel wrote outside tensor '{}'", roof_name(c.roof), name);
  switch (c.roof) {
    case Roof::read: {
      const Tensor& part = c.io.at("part");
      uint32_t sum = 0;
      for (int64_t i = 0; i < part.numel(); ++i) sum += part.as<uint32_t>()[i];
      if (sum != c.expect_sum)
        return fmt::format("device_read: the lanes' partial sums add to {:#x}, the stream's words to {:#x}", sum,
                           c.expect_sum);
      return {};
    }
    case Roof::copy: {
      const uint32_t* x = c.io.at("x").as<uint32_t>();
      const uint32_t* y = c.io.at("y").as<uint32_t>();
      if (std::memcmp(x, y, c.words * 4) == 0) return {};
      uint64_t i = 0;
      while (x[i] == y[i]) ++i;
      return fmt::format("device_copy: word {} is {:#x}, not {:#x}", i, y[i], x[i]);
    }
    case Roof::fma_f32:
    case Roof::fma_f16: {
      const float* out = c.io.at("out").as<float>();
      for (uint64_t l = 0; l < c.lanes; ++l)
        if (!(std::fabs(out[l] - c.expect_lane) <= c.tolerance))
          return fmt::format("{}: lane {} summed its chains to {}, not {}", roof_name(c.roof), l, out[l],
                             c.expect_lane);
      return {};
    }
  }
  return "unknown roof";
}

}  // namespace ts
