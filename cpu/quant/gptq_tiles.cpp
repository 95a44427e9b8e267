// The prepare-time repack of gemm_gptq / gemm_awq weights into tiles (cpu/quant/gptq_tiles.h). The codes are
// read through core/quant/packing.h, the one statement of both formats' bit positions.
#include "cpu/quant/gptq_tiles.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/quant/packing.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {

namespace {

// The runs of rows per group, in group order (act-order's scattered rows gathered, stably), each
// padded to a multiple of kActBlock with rows of source -1.
void sort_rows(GroupTiles& w, const int32_t* group_of_row, int64_t groups) {
  std::vector<std::vector<int32_t>> members(static_cast<size_t>(groups));
  for (int64_t r = 0; r < w.k; ++r) members[static_cast<size_t>(group_of_row[r])].push_back(static_cast<int32_t>(r));
  for (int64_t g = 0; g < groups; ++g) {
    const auto& rows = members[static_cast<size_t>(g)];
    if (rows.empty()) continue;
    const int64_t padded = (static_cast<int64_t>(rows.size()) + kActBlock - 1) / kActBlock * kActBlock;
    w.runs.push_back({static_cast<int32_t>(g), w.rows, padded});
    w.source.insert(w.source.end(), rows.begin(), rows.end());
    w.source.resize(static_cast<size_t>(w.rows + padded), -1);
    w.rows += padded;
  }
  w.in_order = w.rows == w.k;
  for (int64_t r = 0; r < w.rows && w.in_order; ++r) w.in_order = w.source[static_cast<size_t>(r)] == r;
}

// Fills the tiles from code(row, col) and zero_field(group, col) (the stored field, before the
// format's offset) and the f16 scales [groups, n].
template <class Code, class ZeroField>
std::shared_ptr<const GroupTiles> repack(GroupTiles w, const int32_t* group_of_row, int64_t groups,
                                         const uint16_t* scales, Code code, ZeroField zero_field) {
  sort_rows(w, group_of_row, groups);
  w.tiles = (w.n + kTileCols - 1) / kTileCols;
  const int64_t per = w.rows_per_word(), words = w.tile_words(), runs = static_cast<int64_t>(w.runs.size());
  const int64_t head = w.head_bytes();
  try {
    w.codes.resize(static_cast<size_t>(w.tiles * words));
    w.heads.resize(static_cast<size_t>(w.tiles * runs * head));  // zeros: the unused zero fields
  } catch (const std::bad_alloc&) {
    fail("gemm_{}: cannot allocate the repacked weights", w.zero_offset ? "gptq" : "awq");
  }
  parallel_for(w.tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t cols = std::min(kTileCols, w.n - t * kTileCols);
      uint32_t* dst = w.codes.data() + t * words;
      for (int64_t r = 0; r < w.rows; r += per)
        for (int64_t c = 0; c < kTileCols; ++c) {
          uint32_t word = 0;
          for (int64_t i = 0; i < per && c < cols; ++i) {
            const int32_t src = w.source[static_cast<size_t>(r + i)];
            if (src >= 0) word |= code(src, t * kTileCols + c) << (w.bits * i);
          }
          dst[r / per * kTileCols + c] = word;
        }
      for (int64_t ri = 0; ri < runs; ++ri) {
        uint8_t* h = w.heads.data() + (t * runs + ri) * head;
        const int64_t g = w.runs[static_cast<size_t>(ri)].group;
        std::memcpy(h, scales + g * w.n + t * kTileCols, static_cast<size_t>(2 * cols));
        for (int64_t c = 0; c < cols; ++c) {
          const uint32_t z = zero_field(g, t * kTileCols + c);
          if (w.bits == 8)
            h[2 * kTileCols + c] = static_cast<uint8_t>(z);
          else
            h[2 * kTileCols + c % 16] |= static_cast<uint8_t>(z << (4 * (c / 16)));
        }
      }
    }
  });
  return std::make_shared<const GroupTiles>(std::move(w));
}

std::vector<int32_t> plain_groups(int64_t k, int64_t group_size) {
  std::vector<int32_t> g(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) g[static_cast<size_t>(r)] = static_cast<int32_t>(r / group_size);
  return g;
}

// Bits as a constant, so that packing.h's divisions by the values per word compile to shifts.
template <int64_t Bits>
std::shared_ptr<const GroupTiles> tile_gptq_bits(const GptqParams& p, TensorMap& t) {
  GroupTiles w;
  w.bits = static_cast<int>(Bits);
  w.zero_offset = 1;
  w.k = p.k;
  w.n = p.n;
  const std::vector<int32_t> plain = p.desc_act ? std::vector<int32_t>{} : plain_groups(p.k, p.group_size);
  const int32_t* group_of_row = p.desc_act ? tensor(t, "g_idx").as<int32_t>() : plain.data();
  const int32_t* qweight = tensor(t, "qweight").as<int32_t>();
  const int32_t* qzeros = tensor(t, "qzeros").as<int32_t>();
  return repack(
      std::move(w), group_of_row, p.k / p.group_size, tensor(t, "scales").as<uint16_t>(),
      [&](int64_t r, int64_t c) { return quant::gptq_code(qweight, p.n, Bits, r, c); },
      [&](int64_t g, int64_t c) { return static_cast<uint32_t>(quant::gptq_zero(qzeros, p.n, Bits, g, c) - 1); });
}

}  // namespace

std::shared_ptr<const GroupTiles> tile_gptq(const GptqParams& p, TensorMap& t) {
  return p.bits == 8 ? tile_gptq_bits<8>(p, t) : tile_gptq_bits<4>(p, t);
}

std::shared_ptr<const GroupTiles> tile_awq(const AwqParams& p, TensorMap& t) {
  GroupTiles w;
  w.bits = 4;
  w.zero_offset = 0;
  w.k = p.k;
  w.n = p.n;
  const std::vector<int32_t> groups = plain_groups(p.k, p.group_size);
  const int32_t* qweight = tensor(t, "qweight").as<int32_t>();
  const int32_t* qzeros = tensor(t, "qzeros").as<int32_t>();
  return repack(
      std::move(w), groups.data(), p.k / p.group_size, tensor(t, "scales").as<uint16_t>(),
      [&](int64_t r, int64_t c) { return quant::awq_code(qweight, p.n, r, c); },
      [&](int64_t g, int64_t c) { return static_cast<uint32_t>(quant::awq_zero(qzeros, p.n, g, c)); });
}

}  // namespace ts::cpu
