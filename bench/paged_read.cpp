// baseline/paged_read/<pool>: the read-only stream over a paged KV pool laid out as a paged decode
// benchmark lays out its own: [num_blocks, num_kv_heads, block_size, head_dim] keys and values, a
// shuffled block table, so that each (block, kv head) is a region of block_size rows at a place of its
// own, as many blocks as the preset's contexts fill. The pools are those of kv_paged_decode_attention
// (named by its preset, which names the pool's element type: llama3_8b_ctx4096_F16) and of
// paged_decode_attention's decode presets (whose pool is of the benchmark's dtype, which the name
// adds: llama3_8b_b8_ctx4096_F16). The roof of a paged decode kernel, which can read no faster than
// this order of its bytes allows, beside the contiguous stream_read: on a 2-vCPU Xeon (2026-11-27,
// standalone, 4 KiB regions) block-order reads ran at 0.74x the contiguous read, two blocks' key and
// value regions at once (this benchmark's order) at 0.87x, four at 0.82x.
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
#include "core/case_list.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/op.h"
#include "core/ops/paged_params.h"
#include "core/tensor.h"

namespace ts::bench {

HWY_EXPORT(SumRegions4);

namespace {

constexpr uint32_t kWord = 5;  // every word: a region's sum is 5 x its length (mod 2^32)

// The pool geometry of one preset: its kv heads, the blocks its contexts fill (the ones a decode
// reads, not the pool's spare ones), and the bytes of a (block, kv head) region.
struct Geometry {
  int64_t heads = 0, blocks = 0, region_bytes = 0;
};

// A decode op whose pools are read: its key pool tensor (whose declaration gives the pool's shape and
// element type), whether the benchmark's dtype is added to the pool's name (the pool is of that
// dtype), and the blocks a preset's contexts fill (0: not a decode preset).
struct PagedOp {
  const char* op;
  const char* key_pool;
  bool dtype_in_name;
  int64_t (*blocks)(const Params& p);
};

constexpr int64_t blocks_of(int64_t len, int64_t block_size) { return (len + block_size - 1) / block_size; }

constexpr PagedOp kPagedOps[] = {
    {"kv_paged_decode_attention", "layer_k", false,
     [](const Params& p) {
       const auto& kv = p.as<KvPagedDecodeParams>();
       return blocks_of(kv.valid_kv_len, kv.block_size);
     }},
    {"paged_decode_attention", "k_pool", true,
     [](const Params& p) {
       const auto& d = p.as<PagedDecodeParams>();
       int64_t n = 0;
       if (d.q_len == 1)
         for (int64_t len : d.gen_lens) n += blocks_of(len, d.block_size);
       return n;
     }},
};

struct PagedPool {
  std::string name;
  Geometry g;
};

// Every pool that the decode ops' benchmarks of this run read (their presets in the run's dtypes),
// once each, from the ops' own descriptions: the preset's parameters and the pool's declaration.
std::vector<PagedPool> paged_pools(const Options& o) {
  std::vector<PagedPool> out;
  for (const PagedOp& po : kPagedOps) {
    const Op* op = find_op(po.op);
    check(op != nullptr, "baseline/paged_read: no op {}", po.op);
    for (const CaseEntry& e : op_cases(*op, {.set = CaseSet::Benchmark, .dtypes = o.dtypes})) {
      const Params& p = e.spec->params;
      const int64_t blocks = po.blocks(p);
      if (blocks == 0) continue;
      const std::vector<TensorDecl> decls = op->tensors(p, e.dtype);
      const auto pool = std::find_if(decls.begin(), decls.end(), [&](const TensorDecl& d) { return d.name == po.key_pool; });
      check(pool != decls.end() && pool->shape.size() == 4, "baseline/paged_read: {} declares no 4-d {}", po.op,
            po.key_pool);
      // [num_blocks, num_kv_heads, block_size, head_dim] of its element type
      const Geometry g{pool->shape[1], blocks, pool->shape[2] * pool->shape[3] * static_cast<int64_t>(dtype_size(pool->dtype))};
      std::string name = e.case_name();
      if (po.dtype_in_name) name += fmt::format("_{}", dtype_name(e.dtype));
      if (std::none_of(out.begin(), out.end(), [&](const PagedPool& q) { return q.name == name; }))
        out.push_back({std::move(name), g});
    }
  }
  return out;
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

std::unique_ptr<PagedSetup> make_setup(const Geometry& g) {
  auto s = std::make_unique<PagedSetup>();
  s->g = g;
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

void paged_read(benchmark::State& state, const PagedPool& pool) {
  const std::string name = "baseline/paged_read/" + pool.name;
  PagedSetup* s = setup_or_skip<PagedSetup>(state, name, [&] { return make_setup(pool.g); });
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
  for (const PagedPool& pool : paged_pools(o)) {  // every preset's pool: each context, each element type
    const std::string name = "baseline/paged_read/" + pool.name;
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [pool](benchmark::State& st) { paged_read(st, pool); })
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
