// Collective benchmarks under mpiexec. Every rank runs every benchmark; each timed call starts after
// a barrier and its time is the slowest rank's (a collective is done when its last rank is). Google
// Benchmark's adaptive iteration count would let each rank choose its own from its own clock and leave
// the others waiting in a collective: the count is fixed by the size instead, the same on every rank.
//
// Bandwidths as nccl-tests define them (its PERFORMANCE.md), for a buffer of S bytes per rank over W
// ranks taking t seconds:
//   all_reduce   algbw = S / t        busbw = algbw * 2 (W - 1) / W
//   all_gather   algbw = W S / t      busbw = algbw * (W - 1) / W     (S is each rank's share)
//   broadcast    algbw = S / t        busbw = algbw
// busbw is comparable with the links' (here: the memory's) bandwidth whatever W is.
#include "bench/collective_benches.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/iteration_cap.h"
#include "bench/op_benches.h"
#include "bench/setup_cache.h"
#include "core/backend.h"
#include "core/collective.h"
#include "mpi/world_scope.h"

namespace ts::bench {

namespace {

constexpr const char* kOps[] = {"all_reduce", "all_gather", "broadcast"};

// Calls per benchmark run: about 512 MiB per rank in all, at least 3 and at most 1000.
int64_t calls_for(int64_t bytes) { return std::clamp<int64_t>((int64_t{512} << 20) / bytes, 3, 1000); }

double bus_factor(const std::string& op, int w) {
  if (op == "all_reduce") return 2.0 * (w - 1) / w;
  if (op == "all_gather") return double(w - 1) / w;
  return 1.0;
}
double algbw_bytes(const std::string& op, int w, int64_t bytes) { return op == "all_gather" ? double(w) * bytes : double(bytes); }

// F32 buffers of `bytes` (8 B and up: a whole number of F32 elements).
int64_t elements(int64_t bytes) { return bytes / 4; }

// Small exact values: sums of a few ranks stay exact, so a warm-up result can be spot-checked.
void fill(Tensor& x, int rank) {
  float* v = x.as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) v[i] = static_cast<float>((i + rank) % 7 - 3);
}

// One timed call per iteration, its time the slowest rank's; the counters from the mean time.
void run_timed(benchmark::State& st, const std::string& op, int64_t bytes, const std::function<void()>& call,
               const std::function<double()>& extra_seconds = {}) {
  Communicator& w = world();
  double total = 0, extra = 0;
  for (auto _ : st) {
    w.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const float mine = std::chrono::duration<float>(std::chrono::steady_clock::now() - t0).count();
    float slowest = 0;
    w.all_reduce(&mine, &slowest, 1, DType::F32, ReduceOp::Max);
    st.SetIterationTime(slowest);
    total += slowest;
    if (extra_seconds) extra += extra_seconds();
  }
  const double mean = total / static_cast<double>(st.iterations());
  const double algbw = algbw_bytes(op, w.size(), bytes) / mean;
  st.counters["algbw"] = algbw;
  st.counters["busbw"] = algbw * bus_factor(op, w.size());
  st.counters["ranks"] = w.size();
  if (extra_seconds) st.counters["staging_fraction"] = extra / static_cast<double>(st.iterations()) / mean;
}

struct CollectiveSetup : Setup {
  TensorMap io;
  std::unique_ptr<Launch> launch;
};

// The backend's collective on this rank's own tensors (x.{rank}, out.{rank}: the others' are not
// needed by a rank's launch), prepared once: the ranks agree on the call there, before any data moves.
std::unique_ptr<CollectiveSetup> make_collective(Backend& b, const Problem& pr) {
  auto s = std::make_unique<CollectiveSetup>();
  const int r = world().rank();
  const CollectiveCall c = collective_call(pr);
  Tensor x(DType::F32, {c.len});
  fill(x, r);
  s->io.emplace(rank_tensor("x", r), std::move(x));
  s->io.emplace(rank_tensor("out", r), Tensor(DType::F32, {c.out_len()}));
  s->launch = b.prepare(pr, s->io);
  s->launch->execute();  // warm-up: connections, registrations, first-touch pages
  return s;
}

Params params_of(const std::string& op, int w, int64_t len) {
  if (op == "all_reduce") return Params::of(AllReduceParams{{w, len}, ReduceOp::Sum});
  if (op == "all_gather") return Params::of(AllGatherParams{{w, len}});
  return Params::of(CollectiveBroadcastParams{{w, len}, w - 1});  // from the last rank, as the cases
}

void run_collective(benchmark::State& st, const std::string& name, const std::string& bname, const std::string& op,
                    int64_t bytes) {
  Backend& b = backend(bname);
  const Availability a = b.availability();
  if (!a.ok) return st.SkipWithError(("backend unavailable: " + a.detail).c_str());
  const Problem pr = make_problem(op_or_throw(op), params_of(op, world().size(), elements(bytes)), DType::F32);
  if (const Support s = b.supports(pr); !s.ok) return st.SkipWithError(("unsupported: " + s.reason).c_str());
  auto* s = setup_or_skip<CollectiveSetup>(st, name, [&] { return make_collective(b, pr); });
  if (!s) return;
  // A device's collective stages its buffers through host memory: that share of the time as a counter.
  // Where it maps them instead (counter `mapped`), that share is the mapping's.
  std::function<double()> staging;
  const auto* staged = dynamic_cast<const StagedCollectiveLaunch*>(s->launch.get());
  if (staged) staging = [staged] { return staged->staging_seconds(); };
  run_timed(st, op, bytes, [&] { s->launch->execute(); }, staging);
  if (staged) st.counters["mapped"] = staged->maps() ? 1 : 0;
  st.SetLabel(world().describe());
}

// Buffers as the collectives' own: tensors of the same allocator (alignment, huge pages where the
// allocator takes them), so the baseline and a backend differ by the call alone.
struct HostBuffers : Setup {
  Tensor send, recv;
};
std::unique_ptr<HostBuffers> host_buffers(int64_t bytes) {
  auto h = std::make_unique<HostBuffers>();
  h->send = Tensor(DType::F32, {elements(bytes)});
  h->recv = Tensor(DType::F32, {elements(bytes)});
  fill(h->send, world().rank());
  return h;
}

void run_mpi_allreduce(benchmark::State& st, const std::string& name, int64_t bytes) {
  const RawAllreduce raw = mpi_allreduce_baseline();
  auto* s = setup_or_skip<HostBuffers>(st, name, [&] {
    auto h = host_buffers(bytes);
    raw(h->send.as<float>(), h->recv.as<float>(), elements(bytes));  // warm-up, as the collectives'
    return h;
  });
  if (!s) return;
  run_timed(st, "all_reduce", bytes, [&] { raw(s->send.as<float>(), s->recv.as<float>(), elements(bytes)); });
  st.SetLabel(world().describe());
}

void run_memcpy(benchmark::State& st, const std::string& name, int64_t bytes) {
  auto* s = setup_or_skip<HostBuffers>(st, name, [&] { return host_buffers(bytes); });
  if (!s) return;
  // Every rank at once: what the memory gives W processes copying, the bound of any host collective.
  run_timed(st, "broadcast", bytes, [&] {
    std::memcpy(s->recv.data(), s->send.data(), static_cast<size_t>(bytes));
    benchmark::DoNotOptimize(s->recv.data());
  });
}

}  // namespace

std::vector<int64_t> collective_sizes(bool full) {
  // The short sweep spans latency (8 B) to bandwidth (16 MiB, past every cache) in five steps; the
  // full one adds every power of 4 up to 256 MiB, minutes of a loaded machine's time per backend.
  if (!full) return {8, 1 << 10, 64 << 10, 1 << 20, 16 << 20};
  std::vector<int64_t> v{8};
  for (int64_t b = 16; b <= (int64_t{256} << 20); b *= 4) v.push_back(b);
  return v;
}

std::vector<std::string> register_collective_benchmarks(int rounds, bool full) {
  const int w = world().size();
  std::vector<std::string> listed;
  const auto reg = [&listed](const std::string& name, int64_t bytes, std::function<void(benchmark::State&)> fn) {
    // Listed (so that the filter reaches it under its fixed-count name) only where the filter selects it.
    if (filter_selects(name + "/manual_time") &&
        std::find(listed.begin(), listed.end(), name + "/manual_time") == listed.end())
      listed.push_back(name + "/manual_time");
    benchmark::RegisterBenchmark(name.c_str(), [fn](benchmark::State& st) { fn(st); })
        ->UseManualTime()
        ->Iterations(calls_for(bytes))
        ->Unit(benchmark::kMicrosecond);
  };
  for (int round = 0; round < rounds; ++round)
    for (int64_t bytes : collective_sizes(full)) {
      // The baselines after the backends in even rounds and before them in odd ones, so that neither
      // side of a comparison always runs first (a round's ratio is then free of the order's effect).
      const auto baselines = [&] {
        if (mpi_allreduce_baseline()) {
          const std::string name = fmt::format("baseline/mpi_allreduce_w{}_{}", w, bytes);
          reg(name, bytes, [=](benchmark::State& st) { run_mpi_allreduce(st, name, bytes); });
        }
        const std::string name = fmt::format("baseline/host_memcpy_w{}_{}", w, bytes);
        reg(name, bytes, [=](benchmark::State& st) { run_memcpy(st, name, bytes); });
      };
      if (round % 2) baselines();
      for (const std::string& bname : backend_names()) {
        if (bname == "reference") continue;  // computes every rank in one process: no transport to time
        for (const std::string op : kOps) {
          const std::string name = fmt::format("collective/{}/{}_w{}_{}", bname, op, w, bytes);
          reg(name, bytes, [=](benchmark::State& st) { run_collective(st, name, bname, op, bytes); });
        }
      }
      if (round % 2 == 0) baselines();
    }
  return listed;
}

}  // namespace ts::bench
