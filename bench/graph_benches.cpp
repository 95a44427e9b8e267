// One decode step of a graph program per iteration, eagerly (every node validated, planned and
// launched) or replayed from its capture. Counters: host_us (the step's wall time less what its
// launches report on their own timers: the host's share of a step; a device replay's one recorded
// command buffer reports its own), host_cpu_us (the calling thread's CPU time per step), launches (per
// step: the nodes, which a device replay submits as one command buffer), and bytes as
// the weights and KV rows one step reads (every matrix once, of stacked experts the top_k a token
// takes, one embedding row, the context's K and V rows of every layer), so bytes_per_second compares
// with the decode GEMVs' and the read-only stream;
// write_share as the op benchmarks state it (a step writes a few activations and one K/V row per layer).
#include "bench/graph_benches.h"

#include <chrono>
#include <ctime>
#include <memory>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/cache_flush.h"
#include "bench/setup_cache.h"
#include "core/unsupported.h"
#include "graph/case.h"
#include "graph/weights.h"

namespace ts::bench {

namespace {

using graph::DecodeParams;

// The calling thread's CPU time: on a device driver that runs its work on threads of its own (PoCL's
// workers, lavapipe's queue thread) the host's own work per step, which a loaded machine's scheduling
// delays do not inflate as they do wall time less device time (host_us). On cpu it includes the
// kernels' share the calling thread runs.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct GraphPreset {
  std::string name;
  std::string program;
  DecodeParams params;
};

DecodeParams llama3_8b(int64_t layers) {
  // Llama-3-8B's layer shapes; a small vocab (a step reads one embedding row, whatever the vocab).
  DecodeParams p;
  p.kind = QuantKind::Q4_K, p.layers = layers, p.hidden = 4096, p.heads = 32, p.kv_heads = 8, p.head_dim = 128;
  p.ffn = 14336, p.vocab = 256, p.block_size = 16, p.ctx = 1024, p.steps = 1, p.rope_base = 500000.0f;
  return p;
}

DecodeParams small(QuantKind kind, int64_t layers) {
  DecodeParams p;
  p.kind = kind, p.layers = layers, p.hidden = 512, p.heads = 8, p.kv_heads = 2, p.head_dim = 64;
  p.ffn = 1536, p.vocab = 256, p.block_size = 16, p.ctx = 256, p.steps = 1;
  return p;
}

// Qwen3-30B-A3B's layer shapes: 128 experts of 768, 8 a token.
DecodeParams qwen3_30b_a3b(int64_t layers) {
  DecodeParams p;
  p.kind = QuantKind::Q4_K, p.layers = layers, p.hidden = 2048, p.heads = 32, p.kv_heads = 4, p.head_dim = 128;
  p.ffn = 0, p.experts = 128, p.top_k = 8, p.expert_ffn = 768;
  p.vocab = 256, p.block_size = 16, p.ctx = 1024, p.steps = 1, p.rope_base = 1000000.0f, p.eps = 1e-6f;
  return p;
}

DecodeParams small_moe(int64_t layers) {
  DecodeParams p = small(QuantKind::Q4_K, layers);
  p.ffn = 0, p.experts = 8, p.top_k = 2, p.expert_ffn = 512;
  return p;
}

std::vector<GraphPreset> presets() {
  using graph::kLlamaDecode, graph::kQwen3MoeDecode;
  return {{"llama3_8b_Q4_K", kLlamaDecode, llama3_8b(1)},
          {"small_F32", kLlamaDecode, small(QuantKind::F32, 1)},
          {"small_F32", kLlamaDecode, small(QuantKind::F32, 4)},
          {"small_Q4_K", kLlamaDecode, small(QuantKind::Q4_K, 1)},
          {"small_Q4_K", kLlamaDecode, small(QuantKind::Q4_K, 4)},
          {"qwen3_30b_a3b_Q4_K", kQwen3MoeDecode, qwen3_30b_a3b(1)},
          {"small_Q4_K", kQwen3MoeDecode, small_moe(1)}};
}

struct GraphSetup final : Setup {
  std::shared_ptr<graph::KvCache> cache;  // the caller's, as in an engine: the graph only points into it
  std::unique_ptr<graph::DecodeGraph> g;
  std::vector<uint32_t> state;
  double weight_bytes = 0, kv_bytes = 0, written_bytes = 0;
};

std::unique_ptr<GraphSetup> make_setup(Backend& b, const GraphPreset& gp, bool replay, uint64_t seed) {
  const DecodeParams& p = gp.params;
  graph::GraphCase c = graph::generate_graph_case(gp.program, p, seed, /*expected=*/false);
  auto s = std::make_unique<GraphSetup>();
  const double es = static_cast<double>(dtype_size(p.act_dtype()));
  for (const graph::WeightSpec& w : graph::program_weights(gp.program, p)) {
    double bytes = static_cast<double>(shape_numel(w.shape) * static_cast<int64_t>(dtype_size(w.dtype)));
    if (w.use == graph::WeightSpec::Use::Embedding) bytes /= static_cast<double>(p.vocab);  // one row
    if (w.stack > 1) bytes *= static_cast<double>(p.top_k) / static_cast<double>(w.stack);  // the chosen experts
    s->weight_bytes += bytes;
  }
  const graph::StepState st = c.step(0);
  s->kv_bytes = 2.0 * static_cast<double>(p.layers) * static_cast<double>(st.position + 1) * static_cast<double>(p.kv_dim()) * es;
  s->state = st.words(p);
  s->cache = graph::initial_cache(c);
  s->g = std::make_unique<graph::DecodeGraph>(b, graph::build_program(c.program, c.params, c.weights), s->cache);
  for (const auto& n : s->g->program().nodes)
    for (const auto& d : n->problem.decls)
      if (d.role != Role::In && d.name.rfind("cache_", 0) != 0)
        s->written_bytes += static_cast<double>(shape_numel(d.shape)) * static_cast<double>(dtype_size(d.dtype));
  s->written_bytes += 2.0 * static_cast<double>(p.layers) * static_cast<double>(p.kv_dim()) * es;  // the step's K/V rows
  s->g->set_decode_state(s->state);
  if (replay) {
    s->g->begin_graph_capture();
    s->g->step_eager();
    s->g->end_graph_capture();
  }
  // A warm-up step of the kind timed (first-use compilation, page faults; a device replay after an
  // eager step would upload the pools again in its first iteration).
  if (replay) s->g->replay_last_graph();
  else s->g->step_eager();
  return s;
}

void run(benchmark::State& state, const std::string& key, const std::string& bname, const GraphPreset& gp, bool replay,
         const Options& o) {
  Backend& b = backend(bname);
  const Availability a = b.availability();
  if (!a.ok) return state.SkipWithError(("backend unavailable: " + a.detail).c_str());
  if (replay) {
    const Support rs = graph::DecodeGraph::replay_support(b);
    if (!rs.ok) return state.SkipWithError(("unsupported: " + rs.reason).c_str());
  }
  GraphSetup* s = nullptr;
  try {
    s = &setup_once<GraphSetup>(key, [&] { return make_setup(b, gp, replay, o.seed); });
  } catch (const Unsupported& e) {
    return state.SkipWithError(fmt::format("unsupported: {}", e.what()).c_str());
  } catch (const std::exception& e) {
    return state.SkipWithError(fmt::format("setup failed: {}", e.what()).c_str());
  }
  double host = 0, host_cpu = 0;
  for (auto _ : state) {
    before_timed_call(b, o.warm_cache);
    const double c0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    s->g->set_decode_state(s->state);
    if (replay) s->g->replay_last_graph();
    else s->g->step_eager();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    host_cpu += thread_cpu_seconds() - c0;
    host += wall - s->g->last_launch_seconds();
    state.SetIterationTime(wall);
  }
  const double n = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>((s->weight_bytes + s->kv_bytes) * n));
  state.counters["host_us"] = host / n * 1e6;
  state.counters["host_cpu_us"] = host_cpu / n * 1e6;
  state.counters["launches"] = static_cast<double>(s->g->launches_per_step());
  state.counters["write_share"] = s->written_bytes / (s->weight_bytes + s->kv_bytes);
  state.SetLabel(fmt::format("{} ctx={} weights={:.1f}MB kv={:.1f}MB", graph::shape_name(gp.params), gp.params.ctx + 1,
                             s->weight_bytes / 1e6, s->kv_bytes / 1e6));
}

}  // namespace

void register_graph_benchmarks(const Options& o) {
  for (const std::string& bname : backend_names()) {
    if (bname == "reference") continue;  // eager only, and the ground truth: not a contender
    for (const GraphPreset& gp : presets())
      for (bool replay : {false, true}) {
        const std::string name = fmt::format("graph/{}/{}_{}_l{}/{}", bname, gp.program, gp.name, gp.params.layers,
                                             replay ? "replay" : "eager");
        benchmark::RegisterBenchmark(name.c_str(), [name, bname, gp, replay, o](benchmark::State& st) {
          run(st, name, bname, gp, replay, o);
        })->UseManualTime()->Unit(benchmark::kMicrosecond);
      }
  }
}

}  // namespace ts::bench
