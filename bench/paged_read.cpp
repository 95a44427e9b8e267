// baseline/paged_read/<preset>: the read-only stream over a paged KV pool laid out as the
// kv_paged_decode_attention preset of that name lays out its own: [num_blocks, num_kv_heads,
// block_size, head_dim] keys and values of kv_dtype, a shuffled block table, so that each (block, kv
// head) is a region of block_size rows at a place of its own. The roof of a paged decode kernel, which
// can read no faster than this order of its bytes allows, beside the contiguous stream_read: on a
// 2-vCPU Xeon (2026-11-27, standalone, 4 KiB regions) block-order reads ran at 0.74x the contiguous
// read, two blocks' key and value regions at once (this benchmark's order) at 0.87x, four at 0.82x.
// Nothing is computed: the bytes of each region are summed, on all cores, from memory (the caches
// flushed before every iteration, as for the ops).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/paged_read.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The wrapping sum of four regions of n words each (n a multiple of the vector's lanes), read line by line in
// step: four page streams in flight at once, as a kernel that interleaves two blocks' keys and values.
uint32_t SumRegions4(const uint32_t* HWY_RESTRICT r0, const uint32_t* HWY_RESTRICT r1, const uint32_t* HWY_RESTRICT r2,
                     const uint32_t* HWY_RESTRICT r3, size_t n) {
  const hn::ScalableTag<uint32_t> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (size_t i = 0; i < n; i += N) {
    a0 = hn::Add(a0, hn::Load(d, r0 + i));
    a1 = hn::Add(a1, hn::Load(d, r1 + i));
    a2 = hn::Add(a2, hn::Load(d, r2 + i));
    a3 = hn::Add(a3, hn::Load(d, r3 + i));
  }
  return hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
}

}  // namespace ts::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench/all_cores.h"
#include "bench/baselines.h"
#include "bench/cache_flush.h"
#include "bench/iteration_cap.h"
#include "bench/setup_cache.h"
#include "core/error.h"
#include "core/op.h"
#include "core/tensor.h"

namespace ts::bench {

HWY_EXPORT(SumRegions4);

namespace {

constexpr const char* kOp = "kv_paged_decode_attention";
constexpr uint32_t kWord = 5;  // every word: a region's sum is 5 x its length (mod 2^32)

// The pool geometry of one preset, from its parameters (the op's description is the one place it is
// written).
struct Geometry {
  int64_t heads = 0, blocks = 0, region_bytes = 0;
};

Geometry geometry_of(const std::string& preset) {
  const Op* op = find_op(kOp);
  check(op != nullptr, "baseline/paged_read: no op {}", kOp);
  for (const CaseSpec& c : op->benches()) {
    if (c.name != preset) continue;
    const ParamMap m = op->to_map(c.params);
    const auto num = [&](const char* k) { return std::stoll(m.at(k)); };
    const std::string& dt = m.at("kv_dtype");
    const int64_t elem = dt == "F16" || dt == "BF16" ? 2 : dt == "I8" || dt == "F8_E4M3" ? 1 : 0;
    check(elem > 0, "baseline/paged_read: {} has a pool of kv_dtype {}, whose element size it does not know", preset, dt);
    const int64_t bs = num("block_size");
    // The blocks the context fills: the ones a decode reads (the pool's spare blocks it never does).
    return {num("num_kv_heads"), (num("valid_kv_len") + bs - 1) / bs, bs * num("head_dim") * elem};
  }
  fail("baseline/paged_read: {} has no bench preset {}", kOp, preset);
}

struct PagedSetup final : Setup {
  Geometry g;
  size_t bytes = 0;  // of each pool
  std::vector<int64_t> table;
  struct Free {
    size_t bytes;
    void operator()(uint32_t* p) const { free_tensor_memory(p, bytes); }
  };
  std::unique_ptr<uint32_t[], Free> k{nullptr, {0}}, v{nullptr, {0}};
  const uint32_t* region(const uint32_t* pool, int64_t block, int64_t head) const {
    return pool + (block * g.heads + head) * g.region_bytes / 4;
  }
};

std::unique_ptr<PagedSetup> make_setup(const std::string& preset) {
  auto s = std::make_unique<PagedSetup>();
  s->g = geometry_of(preset);
  check(s->g.region_bytes % 64 == 0, "baseline/paged_read: a region of {} bytes is not whole 64-byte vectors",
        s->g.region_bytes);
  check(s->g.blocks % 2 == 0, "baseline/paged_read: {} blocks do not pair up (two are read at a time)", s->g.blocks);
  s->bytes = static_cast<size_t>(s->g.blocks * s->g.heads * s->g.region_bytes);
  // Allocated like tensors (core/tensor.h), on the pages the ops' pools get.
  s->k = {static_cast<uint32_t*>(allocate_tensor_memory(s->bytes)), {s->bytes}};
  s->v = {static_cast<uint32_t*>(allocate_tensor_memory(s->bytes)), {s->bytes}};
  std::fill(s->k.get(), s->k.get() + s->bytes / 4, kWord);
  std::fill(s->v.get(), s->v.get() + s->bytes / 4, kWord);
  // A shuffled table, as the op's generator draws one (core/ops/paged/pool.cpp).
  s->table.resize(static_cast<size_t>(s->g.blocks));
  std::iota(s->table.begin(), s->table.end(), int64_t{0});
  std::shuffle(s->table.begin(), s->table.end(), std::mt19937_64(1));
  return s;
}

// Worker w's share of the (kv head, pair of table entries) steps, read as the regions of both blocks'
// keys and values in step; the sum of everything it read.
uint64_t read_share(const PagedSetup& s, int w, int workers) {
  const int64_t pairs = s.g.blocks / 2, steps = s.g.heads * pairs;
  const size_t words = static_cast<size_t>(s.g.region_bytes / 4);
  const Range r = share(static_cast<size_t>(steps), w, workers, 1);
  uint64_t sum = 0;
  for (size_t t = r.begin; t < r.end; ++t) {
    const int64_t head = static_cast<int64_t>(t) / pairs, b0 = s.table[2 * (t % pairs)], b1 = s.table[2 * (t % pairs) + 1];
    sum += HWY_DYNAMIC_DISPATCH(SumRegions4)(s.region(s.k.get(), b0, head), s.region(s.v.get(), b0, head),
                                             s.region(s.k.get(), b1, head), s.region(s.v.get(), b1, head), words);
  }
  return sum;
}

void paged_read(benchmark::State& state, const std::string& preset) {
  const std::string name = "baseline/paged_read/" + preset;
  PagedSetup* s = setup_or_skip<PagedSetup>(state, name, [&] { return make_setup(preset); });
  if (!s) return;
  const int workers = core_count();
  std::vector<uint64_t> sums(static_cast<size_t>(workers));
  for (auto _ : state) {
    flush_caches();
    const double secs = timed_on_all_cores(workers, [&](int w) { sums[static_cast<size_t>(w)] = read_share(*s, w, workers); });
    state.SetIterationTime(secs);
  }
  // Every word of every region read once: each step's sum is exact (mod 2^32).
  const int64_t steps = s->g.heads * (s->g.blocks / 2);
  const uint64_t want = static_cast<uint64_t>(steps) * static_cast<uint32_t>(kWord * 4 * (s->g.region_bytes / 4));
  if (std::accumulate(sums.begin(), sums.end(), uint64_t{0}) != want)
    return state.SkipWithError(fmt::format("{}: wrong sum", name).c_str());
  const double read = 4.0 * static_cast<double>(steps) * static_cast<double>(s->g.region_bytes);
  state.SetBytesProcessed(static_cast<int64_t>(read * static_cast<double>(state.iterations())));
  state.SetLabel(fmt::format("{} regions of {} B at {} places, {} kv heads, {} threads", 4 * steps,
                             s->g.region_bytes, s->g.blocks, s->g.heads, workers));
}

}  // namespace

std::vector<std::string> register_paged_read(const Options& o) {
  std::vector<std::string> capped;
  const Op* op = find_op(kOp);
  check(op != nullptr, "baseline/paged_read: no op {}", kOp);
  for (const CaseSpec& c : op->benches()) {  // every preset's pool: each context, each element type
    const std::string name = "baseline/paged_read/" + c.name;
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [p = c.name](benchmark::State& st) { paged_read(st, p); })
                  ->UseManualTime()
                  ->Unit(benchmark::kMicrosecond);
    // Capped as a small op is (bench/iteration_cap.h), and only where the filter selects it: a capped
    // name is added to the filter.
    if (o.cold_iterations > 0 && !o.listing && filter_selects(name + "/manual_time")) {
      b->Iterations(o.cold_iterations);
      capped.push_back(name + "/manual_time");
    }
  }
  return capped;
}

}  // namespace ts::bench
#endif
