// Case generation split across threads (core/parallel.h) gives the bytes one thread gives: the stream
// skipped to any offset is the stream drawn that far, a normal fill large enough to be split equals
// the sequential draws, and the quantized rows of a GGUF weight do not depend on the split.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

#include "core/ops/describe.h"
#include "core/ops/quant/gemm_common.h"
#include "core/parallel.h"
#include "core/quant/formats.h"
#include "core/rng.h"

namespace ts {
namespace {

TEST(ParallelGeneration, SkippedStreamIsTheStreamDrawnThatFar) {
  Rng drawn(1234);
  for (int i = 0; i < 1001; ++i) drawn.next();
  Rng skipped = Rng(1234).skipped(1001);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(drawn.next(), skipped.next()) << "draw " << i;
}

TEST(ParallelGeneration, NormalFillEqualsTheSequentialDraws) {
  const int64_t n = (int64_t{1} << 20) + 37;  // above the split threshold, a ragged last range
  Tensor x(DType::F32, {n});
  Rng r(99);
  describe::normal(x, r, 2.0);
  Rng seq(99);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(x.as<float>()[i], static_cast<float>(2.0 * seq.normal())) << "value " << i;
  EXPECT_EQ(r.next(), seq.next()) << "the caller's stream continues after the fill's draws";
}

TEST(ParallelGeneration, GgufWeightDoesNotDependOnTheSplit) {
  // Each row quantized alone, the odd rows drawn in order: the same bytes as row-by-row generation.
  const int64_t rows = 300, cols = 512;
  const QuantKind kind = QuantKind::Q4_K;
  const int64_t row_bytes = quant::row_bytes(quant::block_format(kind), cols);
  Tensor bytes(DType::U8, {rows, row_bytes});
  Rng r(7);
  quant_gemm::gguf_weight(kind, rows, cols, bytes, r);
  // Row by row by hand, as the generator did before it was split.
  Tensor src(DType::F32, {rows, cols});
  Rng s(7);
  for (int64_t i = 0; i < rows * cols; ++i) src.set(i, s.normal());
  const quant::Format& f = quant::block_format(kind);
  std::vector<uint8_t> want(static_cast<size_t>(rows * row_bytes));
  for (int64_t i = 0; i < rows; i += 2) f.quantize_row(src.as<float>() + i * cols, want.data() + i * row_bytes, cols);
  for (int64_t i = 0; i < rows; i += 2)
    ASSERT_EQ(0, std::memcmp(bytes.as<uint8_t>() + i * row_bytes, want.data() + i * row_bytes, row_bytes)) << "row " << i;
}

TEST(ParallelGeneration, RangesCoverEachIndexOnceAndRethrow) {
  std::vector<std::atomic<int>> seen(100000);
  parallel_ranges(100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)]++;
  });
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "index " << i;
  EXPECT_THROW(parallel_ranges(100000, 1000, [](int64_t b, int64_t) {
                 if (b > 0) throw std::runtime_error("a range failed");
               }),
               std::runtime_error);
}

}  // namespace
}  // namespace ts
