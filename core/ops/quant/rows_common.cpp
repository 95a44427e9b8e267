#include "core/ops/quant/rows_common.h"

#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "core/ops/describe.h"
#include "core/parallel.h"

namespace ts::quant_rows {

using namespace describe;

void check(const QuantRowsParams& p) {
  positive(p.n_rows, "n_rows");
  quant::check_row(quant::block_format(p.kind, "kind"), p.n_cols, "n_cols");
}

Shape bytes_shape(const QuantRowsParams& p) {
  const quant::Format& f = quant::block_format(p.kind, "kind");
  quant::check_row(f, p.n_cols, "n_cols");
  return {p.n_rows, quant::row_bytes(f, p.n_cols)};
}

void source_rows(const QuantRowsParams& p, Tensor& x, Rng& r) {
  constexpr double kSigma[] = {0.25, 1.0, 4.0, 0.01, 100.0};
  const quant::Format& f = quant::block_format(p.kind);
  for (int64_t i = 0; i < p.n_rows; ++i) {
    const double sigma = kSigma[i % 5];
    for (int64_t c = 0; c < p.n_cols; ++c) {
      double v = sigma * r.normal();
      if (i == 1 && c < f.block_elems) v = 0;           // an all-zero block: d = 0 and no division by it
      if (i == 2 && c == 3) v = 20 * sigma;              // an outlier that sets its block's scale
      x.set(i * p.n_cols + c, v);
    }
  }
}

void fill_blocks(QuantKind k, const Tensor& src, double max_scale, Tensor& bytes, Rng& r) {
  const quant::Format& f = quant::block_format(k);
  const int64_t n_rows = src.shape()[0], n_cols = src.shape()[1];
  const int64_t row_bytes = quant::row_bytes(f, n_cols);
  uint8_t* out = bytes.as<uint8_t>();
  // Even rows: the source quantized, each row on its own (in parallel: a model-sized weight's rows
  // took seconds of one core). Odd rows: drawn from r in row order, below.
  parallel_ranges((n_rows + 1) / 2, 64, [&](int64_t b, int64_t e) {
    for (int64_t h = b; h < e; ++h) f.quantize_row(src.as<float>() + 2 * h * n_cols, out + 2 * h * row_bytes, n_cols);
  });
  for (int64_t i = 1; i < n_rows; i += 2) {
    uint8_t* row = out + i * row_bytes;
    for (int64_t b = 0; b < row_bytes; ++b) row[b] = static_cast<uint8_t>(r.next() >> 56);
    for (int64_t blk = 0; blk < row_bytes / f.block_bytes; ++blk)
      for (int64_t off : f.f16_scales) {
        if (off < 0) continue;
        // Finite scales of either sign, |s| < max_scale, over 12 binades: f16 subnormals (below 2^-14)
        // among them when max_scale is below 2^-3.
        const double s = r.uniform(-1, 1) * std::ldexp(max_scale, -static_cast<int>(r.below(12)));
        const uint16_t h = f32_to_f16(static_cast<float>(s));
        row[blk * f.block_bytes + off] = static_cast<uint8_t>(h & 0xff);
        row[blk * f.block_bytes + off + 1] = static_cast<uint8_t>(h >> 8);
      }
  }
}

void valid_blocks(const QuantRowsParams& p, Tensor& bytes, Rng& r) {
  Tensor src(DType::F32, {p.n_rows, p.n_cols});
  source_rows(p, src, r);
  fill_blocks(p.kind, src, 0.125, bytes, r);
}

void check_block_rows(const TensorMap& t, const std::string& name, QuantKind kind, int64_t n_cols) {
  auto it = t.find(name);
  if (it == t.end() || it->second.shape().size() != 2) return;  // the declaration check reports these
  const quant::Format* f = quant::format(kind);
  if (!f || n_cols <= 0 || n_cols % f->block_elems != 0 ||
      n_cols / f->block_elems > std::numeric_limits<int64_t>::max() / f->block_bytes)
    return;  // the parameter checks report these
  const int64_t want = quant::row_bytes(*f, n_cols);
  const int64_t got = it->second.shape()[1];
  ts::check(got == want, "tensor '{}': rows of {} bytes, expected {} ({} {} values = {} blocks of {} bytes)", name, got,
        want, n_cols, enum_name(kind), n_cols / f->block_elems, f->block_bytes);
}

std::vector<Preset<QuantRowsParams>> cases(const std::vector<DType>& small_dtypes) {
  std::vector<Preset<QuantRowsParams>> v;
  for (QuantKind k : {QuantKind::Q4_0, QuantKind::Q4_1, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K,
                      QuantKind::Q6_K}) {
    const int64_t blk = quant::block_format(k).block_elems;
    const auto add = [&](int64_t rows, int64_t blocks, Tier tier, std::vector<DType> dts) {
      v.push_back({named(k, fmt::format("r{}_c{}", rows, blocks * blk)), tier,
                   {k, rows, blocks * blk}, std::move(dts)});
    };
    add(1, 1, Tier::Smoke, small_dtypes);
    add(5, 3, Tier::Ci, small_dtypes);
    add(129, 1, Tier::Ci, {DType::F32});
    add(3, blk == 32 ? 128 : 16, Tier::Ci, {DType::F32});  // a 4096-wide row, as a model's hidden size
    add(64, 4096 / blk, Tier::Full, {DType::F32});
  }
  return v;
}

std::vector<Preset<QuantRowsParams>> benches(const std::vector<DType>& dtypes) {
  std::vector<Preset<QuantRowsParams>> v;
  for (QuantKind k : {QuantKind::Q4_0, QuantKind::Q8_0, QuantKind::Q4_K, QuantKind::Q5_K, QuantKind::Q6_K})
    v.push_back({named(k, "n4096_k4096"), Tier::Full, {k, 4096, 4096}, dtypes});
  return v;
}

double dequantize_flops_per_value(QuantKind k) {
  return (k == QuantKind::Q4_0 || k == QuantKind::Q8_0) ? 1.0 : 2.0;
}

double quantize_flops_per_value(QuantKind k) {
  switch (k) {
    case QuantKind::Q4_0:
    case QuantKind::Q4_1:
    case QuantKind::Q8_0: return 4;
    case QuantKind::Q4_K: return 8.0 * 23;  // make_qkx2_quants: 21 candidate scales + the first, ~8 ops each
    case QuantKind::Q5_K: return 8.0 * 18;  // 16 candidates + the first
    case QuantKind::Q6_K: return 6.0 * 20;  // make_qx_quants: 19 candidate scales, ~6 ops each
    default: return 0;
  }
}

double block_bytes_total(const QuantRowsParams& p) {
  const quant::Format& f = quant::block_format(p.kind);
  return static_cast<double>(p.n_rows) * static_cast<double>(quant::row_bytes(f, p.n_cols));
}

}  // namespace ts::quant_rows
