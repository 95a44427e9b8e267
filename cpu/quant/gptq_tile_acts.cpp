// The per-call quantization of a GEMV's activations for the tiles (cpu/quant/gptq_tiles.h): in the tiles'
// sorted row order (a gather under act-order, a plain read otherwise), int8 in blocks of 32 rows,
// d = amax / 127, q = round(a / d) to nearest even, so |a - d q| <= d / 2; padding rows are 0. The
// GEMV cannot start before this, so it runs in the target's vectors rather than one value at a time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/quant/gptq_tile_acts.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>

#include "cpu/quant/gptq_tiles.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One block of 32 values into q (int32); returns d, or a negative value when a value is not finite.
HWY_INLINE float QuantizeBlock(const float* HWY_RESTRICT x, int32_t* HWY_RESTRICT q) {
  const hn::CappedTag<float, 8> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(df));
  auto amax = hn::Zero(df);
  for (int64_t l = 0; l < kActBlock; l += N) {
    const auto v = hn::LoadU(df, x + l);
    if (!hn::AllTrue(df, hn::IsFinite(v))) return -1.0f;
    amax = hn::Max(amax, hn::Abs(v));
  }
  const float m = hn::GetLane(hn::MaxOfLanes(df, amax));
  const auto inv = hn::Set(df, m > 0 ? 127.0f / m : 0.0f);
  for (int64_t l = 0; l < kActBlock; l += N) {
    const auto r = hn::NearestInt(hn::Mul(hn::LoadU(df, x + l), inv));
    hn::StoreU(hn::Min(hn::Max(r, hn::Set(di, -127)), hn::Set(di, 127)), di, q + l);
  }
  return m / 127.0f;
}

template <class T>
HWY_INLINE bool QuantizeRowsAs(const GroupTiles& w, const float* a, int64_t m, T* q, TileActivations& out) {
  const int64_t rows = w.rows, blocks = rows / kActBlock, runs = static_cast<int64_t>(w.runs.size());
  constexpr int64_t per = sizeof(T) == 1 ? 8 : 4;  // int8 activations meet 4-bit codes, int16 8-bit ones
  for (int64_t i = 0; i < m; ++i) {
    const float* x = a + i * w.k;
    for (int64_t ri = 0; ri < runs; ++ri) {
      const TileRun& run = w.runs[static_cast<size_t>(ri)];
      float sum = 0;
      for (int64_t r0 = run.first; r0 < run.first + run.rows; r0 += kActBlock) {
        alignas(32) float gathered[kActBlock];
        const float* v = x + r0;
        if (!w.in_order) {
          for (int64_t l = 0; l < kActBlock; ++l) {
            const int32_t src = w.source[static_cast<size_t>(r0 + l)];
            gathered[l] = src < 0 ? 0.0f : x[src];
          }
          v = gathered;
        }
        alignas(32) int32_t qb[kActBlock];
        const float d = QuantizeBlock(v, qb);
        if (d < 0) return false;
        // Within a word's rows the even ones first, then the odd ones (gptq_tiles.h).
        T* dst = q + i * rows + r0;
        int32_t qsum = 0;
        for (int64_t l = 0; l < kActBlock; l += per)
          for (int64_t t = 0; t < per; ++t) {
            dst[l + (t % 2) * (per / 2) + t / 2] = static_cast<T>(qb[l + t]);
            qsum += qb[l + t];
          }
        out.d[static_cast<size_t>(i * blocks + r0 / kActBlock)] = d;
        sum += d * static_cast<float>(qsum);
      }
      out.run_sum[static_cast<size_t>(i * runs + ri)] = sum;
    }
  }
  return true;
}

bool QuantizeRows(const GroupTiles& w, const float* a, int64_t m, TileActivations& out) {
  return w.bits == 4 ? QuantizeRowsAs(w, a, m, out.q8.data(), out) : QuantizeRowsAs(w, a, m, out.q16.data(), out);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ts::cpu {
HWY_EXPORT(QuantizeRows);

bool quantize_activations(const GroupTiles& w, const float* a, int64_t m, TileActivations& out) {
  out.m = m;
  out.q8.resize(w.bits == 4 ? static_cast<size_t>(m * w.rows) : 0);
  out.q16.resize(w.bits == 8 ? static_cast<size_t>(m * w.rows) : 0);
  out.d.resize(static_cast<size_t>(m * w.rows / kActBlock));
  out.run_sum.resize(static_cast<size_t>(m) * w.runs.size());
  return HWY_DYNAMIC_DISPATCH(QuantizeRows)(w, a, m, out);
}

}  // namespace ts::cpu
#endif
