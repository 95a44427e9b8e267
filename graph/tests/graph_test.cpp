// The graph family: llama_decode as a case, eager and replayed steps, their errors, and every
// backend's conformance (a step judged node by node against the reference; replay bit for bit against
// eager on the same backend).
#include <atomic>
#include <map>
#include <tuple>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "core/ops/core_params.h"
#include "core/unsupported.h"
#include "graph/case.h"
#include "graph/judge.h"
#include "graph/recording.h"

namespace {
// Every allocation through operator new while `g_count` is set: a replay must make none.
std::atomic<bool> g_count{false};
std::atomic<int64_t> g_allocations{0};
void* counted(std::size_t n, std::size_t align = 0) {
  if (g_count.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = align ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return counted(n); }
void* operator new[](std::size_t n) { return counted(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace ts::graph {
namespace {

// Small llama_decode shapes: positions ctx .. ctx + steps - 1 cross a block boundary (block_size 4).
DecodeParams small(QuantKind kind, int64_t layers, const std::string& program = kLlamaDecode) {
  DecodeParams p;
  p.kind = kind, p.layers = layers;
  if (program == kQwen3MoeDecode) {
    p.hidden = 256, p.ffn = 0, p.heads = 4, p.kv_heads = 2, p.head_dim = 64;
    p.experts = 4, p.top_k = 2, p.expert_ffn = 256;
  } else if (kind == QuantKind::Q4_K) {
    p.hidden = 256, p.ffn = 512, p.heads = 4, p.kv_heads = 2, p.head_dim = 64;
  } else {
    p.hidden = 64, p.ffn = 96, p.heads = 4, p.kv_heads = 2, p.head_dim = 16;
  }
  p.vocab = 50, p.block_size = 4, p.ctx = 5, p.steps = 5;
  return p;
}

const GraphCase& cached_case(QuantKind kind, int64_t layers, const std::string& program = kLlamaDecode) {
  static std::map<std::tuple<std::string, QuantKind, int64_t>, GraphCase> cases;
  auto key = std::tuple{program, kind, layers};
  auto it = cases.find(key);
  if (it == cases.end())
    it = cases.emplace(key, generate_graph_case(program, small(kind, layers, program), 1234 + layers)).first;
  return it->second;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

template <class F> std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GraphCase, RoundTripsThroughAFileAndTheReferenceReproducesIt) {
  const GraphCase& c = cached_case(QuantKind::F32, 2);
  const GraphCase back = graph_case_from_file(parse_safetensors(serialize_safetensors(graph_case_to_file(c))));
  EXPECT_EQ(back.program, kLlamaDecode);
  EXPECT_EQ(back.params.layers, 2);
  ASSERT_EQ(back.expected.size(), c.expected.size());
  const StepsRun ref = run_graph_case(backend("reference"), back, RunMode::Eager);
  for (int64_t s = 0; s < c.params.steps; ++s)
    EXPECT_TRUE(same_bits(ref.outputs[s], back.expected.at(fmt::format("out.{}", s)))) << "step " << s;
  for (int64_t l = 0; l < c.params.layers; ++l)
    EXPECT_TRUE(same_bits(ref.cache->k[l], back.expected.at(fmt::format("cache.k.{}", l))));
  // The state changes every step and the table grows across a block boundary.
  EXPECT_NE(c.step(0).position, c.step(1).position);
  EXPECT_LT((c.step(0).position) / c.params.block_size, (c.step(c.params.steps - 1).position) / c.params.block_size);
}

TEST(GraphCase, BadCasesAreOneLineErrors) {
  auto file = [] { return graph_case_to_file(cached_case(QuantKind::F32, 1)); };
  {
    SafetensorsFile f = file();
    f.metadata["program"] = "gpt9_decode";
    EXPECT_EQ(error_of([&] { graph_case_from_file(f); }),
              "unknown graph program 'gpt9_decode' (programs: llama_decode, qwen3_moe_decode)");
  }
  {
    SafetensorsFile f = file();
    f.tensors["state.tokens"] = Tensor(DType::U32, {3});
    EXPECT_EQ(error_of([&] { graph_case_from_file(f); }),
              "graph case: state tensor 'state.tokens' has shape [3], the program needs [5]");
  }
  {
    SafetensorsFile f = file();
    f.tensors["blk.0.attn_q"] = Tensor(DType::F32, {64, 63});
    EXPECT_EQ(error_of([&] { graph_case_from_file(f); }),
              "graph case: weight 'blk.0.attn_q' has shape [64,63], the program needs [64,64]");
  }
  {
    SafetensorsFile f = file();
    f.metadata["steps"] = "0";
    EXPECT_EQ(error_of([&] { graph_case_from_file(f); }), "parameter 'steps' must be positive, is 0");
  }
  {
    SafetensorsFile f = file();
    f.tensors["state.tokens"].as<uint32_t>()[2] = 50;
    EXPECT_EQ(error_of([&] { graph_case_from_file(f); }), "graph case: state.tokens[2] is 50, not below vocab 50");
  }
  {
    SafetensorsFile f = file();
    f.tensors["state.block_tables"].as<uint32_t>()[4 * 4] = 99;  // step 4's first entry
    EXPECT_EQ(error_of([&] { graph_case_from_file(f); }), "graph case: state.block_tables[4,0] is 99, the pools have 5 blocks");
  }
}

// cpu: N steps replayed equal N steps eager bit for bit (outputs and pools), the replay reading each
// step's position, length and table from the state buffer.
// A capture window around one eager step: what every replay test records first.
void capture_one_step(DecodeGraph& g) {
  g.begin_graph_capture();
  g.step_eager();
  g.end_graph_capture();
}

TEST(GraphReplay, CpuReplayEqualsEagerBitForBit) {
  for (auto [program, kind] : {std::pair{kLlamaDecode, QuantKind::F32}, {kLlamaDecode, QuantKind::Q4_K},
                               {kQwen3MoeDecode, QuantKind::Q4_K}}) {
    SCOPED_TRACE(program);
    const GraphCase& c = cached_case(kind, 2, program);
    const StepsRun eager = run_graph_case(backend("cpu"), c, RunMode::Eager);
    const StepsRun replay = run_graph_case(backend("cpu"), c, RunMode::Replay);
    for (int64_t s = 0; s < c.params.steps; ++s) EXPECT_TRUE(same_bits(eager.outputs[s], replay.outputs[s])) << "step " << s;
    for (int64_t l = 0; l < c.params.layers; ++l) {
      EXPECT_TRUE(same_bits(eager.cache->k[l], replay.cache->k[l]));
      EXPECT_TRUE(same_bits(eager.cache->v[l], replay.cache->v[l]));
    }
    // And the steps differ from each other: a replay that kept step 0's state would not match.
    EXPECT_FALSE(same_bits(eager.outputs[1], eager.outputs[2]));
  }
}

TEST(GraphReplay, CpuReplayAllocatesValidatesAndPlansNothing) {
  for (auto [program, kind] : {std::pair{kLlamaDecode, QuantKind::F32}, {kLlamaDecode, QuantKind::F16},
                               {kLlamaDecode, QuantKind::Q4_K}, {kQwen3MoeDecode, QuantKind::Q4_K}}) {
  SCOPED_TRACE(std::string(program) + " " + std::string(enum_name(kind)));
  const GraphCase& c = cached_case(kind, 1, program);
  TensorMap w = c.weights;
  auto cache = initial_cache(c);
  DecodeGraph g(backend("cpu"), build_program(c.program, c.params, w), cache);
  g.set_decode_state(c.step(0));
  capture_one_step(g);
  const DecodeGraph::Counters before = g.counters();
  EXPECT_EQ(before.prepares, g.launches_per_step());
  EXPECT_EQ(before.validations, g.launches_per_step());
  for (int64_t s = 1; s < c.params.steps; ++s) {
    const std::vector<uint32_t> words = c.step(s).words(c.params);
    g.set_decode_state(words);
    g_allocations = 0;
    g_count = true;
    g.replay_last_graph();
    g_count = false;
    EXPECT_EQ(g_allocations.load(), 0) << "step " << s;
  }
  EXPECT_EQ(g.counters().prepares, before.prepares);
  EXPECT_EQ(g.counters().validations, before.validations);
  g.check_guards();
  }
}

// A device's recorded step binds a whole input to the buffer of the node that wrote it (a share)
// and copies only what a share cannot carry: parts of a tensor, in-out tensors, the state words.
Role role_in(const Node& n, const std::string& name) {
  for (const TensorDecl& d : n.problem.decls)
    if (d.name == name) return d.role;
  ADD_FAILURE() << n.label << " has no tensor " << name;
  return Role::In;
}

TEST(GraphRecording, WholeInputsAreSharedWithTheirWritersTheRestCopied) {
  for (auto [program, kind] : {std::pair{kLlamaDecode, QuantKind::F32}, {kQwen3MoeDecode, QuantKind::Q4_K}}) {
    SCOPED_TRACE(program);
    const GraphCase& c = cached_case(kind, 2, program);
    TensorMap w = c.weights;
    const Program prog = build_program(c.program, c.params, w);
    auto cache = initial_cache(c);
    std::vector<Tensor*> pools;
    for (int64_t l = 0; l < c.params.layers; ++l) pools.push_back(&cache->k[l]), pools.push_back(&cache->v[l]);
    const std::vector<Launch*> launches(prog.nodes.size(), nullptr);
    const StepRecording r = step_recording(prog, launches, pools);
    ASSERT_EQ(r.nodes.size(), prog.nodes.size());
    int64_t shares = 0;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      const Node& n = *prog.nodes[i];
      SCOPED_TRACE(n.label);
      for (const StepRecording::Share& sh : r.nodes[i].shares) {
        ++shares;
        EXPECT_EQ(role_in(n, sh.tensor), Role::In) << sh.tensor;
        ASSERT_TRUE(sh.src_node >= 0 && static_cast<size_t>(sh.src_node) < i) << sh.tensor;
        const Node& writer = *prog.nodes[static_cast<size_t>(sh.src_node)];
        EXPECT_NE(role_in(writer, sh.src), Role::In) << sh.tensor << " shares " << writer.label << "'s input " << sh.src;
        EXPECT_EQ(sh.bytes, static_cast<int64_t>(n.io.at(sh.tensor).nbytes()));
        EXPECT_EQ(sh.bytes, static_cast<int64_t>(writer.io.at(sh.src).nbytes()));
        for (const std::string& t : r.nodes[i].tensors) EXPECT_NE(t, sh.tensor) << "a shared input is guard-checked";
      }
      for (const StepRecording::Copy& cp : r.nodes[i].copies) {
        const bool part = cp.dst_byte != 0 || cp.bytes != static_cast<int64_t>(n.io.at(cp.dst).nbytes());
        EXPECT_TRUE(cp.src_node == StepRecording::kState || part || role_in(n, cp.dst) == Role::InOut)
            << cp.dst << " is copied whole into an input: it should be shared";
        if (cp.src_node != StepRecording::kState)
          EXPECT_NE(role_in(*prog.nodes[static_cast<size_t>(cp.src_node)], cp.src), Role::In) << cp.dst << " copies an input";
      }
    }
    // Per layer: the two norms' inputs, q / k / v's and o's activation rows, attention's q, the
    // attention residual's x (8); llama's ffn: gate's, up's and down's rows and the residual's x (4);
    // qwen3's: the router's row, top-k's logits, the two expert GEMVs' rows and ids, the weighted
    // sum's slots and weights (8). And the final norm's input.
    const int64_t per_layer = program == std::string(kLlamaDecode) ? 12 : 16;
    EXPECT_EQ(shares, per_layer * c.params.layers + 1);
  }
}

// A share of a share, and a copy out of a shared input, are resolved to the tensor's writer (a shared
// input's own device buffer is never written): three norms, the second reading the first's output,
// the third reading the second's input.
TEST(GraphRecording, SharesAndCopiesOfASharedInputReadItsWriter) {
  Program p;
  p.name = "chain";
  p.params = small(QuantKind::F32, 1);
  p.state = std::make_unique<Tensor>(DType::U32, Shape{p.params.state_words()});
  for (const char* label : {"a", "b", "c"}) {
    auto n = std::make_unique<Node>();
    n->label = label;
    n->problem = make_problem(op_or_throw("rms_norm"), Params::of(RmsNormParams{.tokens = 1, .dim = 8, .eps = 1e-5f}),
                              DType::F32);
    n->io = allocate_from_decls(n->problem.decls);
    p.nodes.push_back(std::move(n));
  }
  Node &a = *p.nodes[0], &b = *p.nodes[1], &c = *p.nodes[2];
  b.binds.push_back({Bind::Kind::Copy, &b.io.at("x"), &a.io.at("out"), 0, 0, 8});
  c.binds.push_back({Bind::Kind::Copy, &c.io.at("x"), &b.io.at("x"), 0, 0, 8});      // whole: a share
  c.binds.push_back({Bind::Kind::Copy, &c.io.at("w"), &b.io.at("x"), 2, 0, 4});      // a part: a copy
  p.output = &c.io.at("out");
  const std::vector<Launch*> launches(3, nullptr);
  const StepRecording r = step_recording(p, launches, {});
  ASSERT_EQ(r.nodes[1].shares.size(), 1u);
  ASSERT_EQ(r.nodes[2].shares.size(), 1u);
  ASSERT_EQ(r.nodes[2].copies.size(), 1u);
  EXPECT_EQ(r.nodes[2].shares[0].src_node, 0);
  EXPECT_EQ(r.nodes[2].shares[0].src, "out");
  EXPECT_EQ(r.nodes[2].copies[0].src_node, 0);
  EXPECT_EQ(r.nodes[2].copies[0].src, "out");
  EXPECT_EQ(r.nodes[2].copies[0].src_byte, 8);
  EXPECT_EQ(r.nodes[2].copies[0].bytes, 16);
  EXPECT_EQ(r.output_node, 2);
}

// Replay before capture, a state buffer too small, reset_graph then a new capture, replay after the
// cache was resized or freed: one-line errors, on every backend that replays.
void expect_replay_errors(Backend& b) {
  const GraphCase& c = cached_case(QuantKind::F32, 1);
  TensorMap w = c.weights;
  auto cache = initial_cache(c);
  DecodeGraph g(b, build_program(c.program, c.params, w), cache);
  g.set_decode_state(c.step(0));
  EXPECT_EQ(error_of([&] { g.replay_last_graph(); }),
            "llama_decode: replay before capture: no step is recorded (begin_graph_capture, a step, end_graph_capture)");
  // A state buffer shorter than the program reads.
  const std::vector<uint32_t> words = c.step(0).words(c.params);
  EXPECT_EQ(error_of([&] { g.set_decode_state(std::span(words).first(4)); }),
            "llama_decode: state buffer too small: 4 words, a step reads 7 (token, position, context length, 4 block-table entries)");
  std::vector<uint32_t> bad = words;
  bad[state_layout::kToken] = 50;
  EXPECT_EQ(error_of([&] { g.set_decode_state(bad); }), "llama_decode: state token 50 is not below vocab 50");
  bad = words;
  bad[state_layout::kTable] = 5;
  EXPECT_EQ(error_of([&] { g.set_decode_state(bad); }), "llama_decode: state block table entry 0 is 5, the cache has 5 blocks");
  capture_one_step(g);
  g.set_decode_state(c.step(1));
  g.replay_last_graph();
  const Tensor first = g.output();
  // reset_graph, then replay: an error until a capture; the new capture replays the same bits.
  g.reset_graph();
  EXPECT_EQ(error_of([&] { g.replay_last_graph(); }),
            "llama_decode: replay before capture: no step is recorded (begin_graph_capture, a step, end_graph_capture)");
  capture_one_step(g);
  g.replay_last_graph();
  EXPECT_TRUE(same_bits(first, g.output()));
  // The cache resized, then freed: the recorded step points into pools that are gone.
  cache->resize(c.params.num_blocks() + 3);
  EXPECT_EQ(error_of([&] { g.replay_last_graph(); }),
            "llama_decode: replay after its KV cache was resized (5 blocks at capture, 8 now; reset_graph, then capture again)");
  cache.reset();
  EXPECT_EQ(error_of([&] { g.replay_last_graph(); }),
            "llama_decode: replay after its KV cache was freed (reset_graph, then capture again)");
  EXPECT_EQ(error_of([&] { g.step_eager(); }), "llama_decode: a step after its KV cache was freed");
}

TEST(GraphReplay, ErrorsNeverAStaleRead) { expect_replay_errors(backend("cpu")); }

// A write past a node's tensor or a pool is seen: the guard zones stay checked around replays.
TEST(GraphReplay, GuardZonesAreChecked) {
  const GraphCase& c = cached_case(QuantKind::F32, 1);
  TensorMap w = c.weights;
  auto cache = initial_cache(c);
  DecodeGraph g(backend("cpu"), build_program(c.program, c.params, w), cache);
  g.set_decode_state(c.step(0));
  capture_one_step(g);
  g.replay_last_graph();
  g.check_guards();
  Tensor& out = const_cast<Tensor&>(g.output());
  out.storage()[kGuardBytes + out.nbytes()] = std::byte{0};  // one byte past the output
  EXPECT_EQ(error_of([&] { g.check_guards(); }), "llama_decode (output_norm): tensor 'out' has a guard zone overwritten");
  out.storage()[kGuardBytes + out.nbytes()] = std::byte{kGuardByte};
  cache->v[0].storage()[0] = std::byte{0};  // one byte before layer 0's V pool
  EXPECT_EQ(error_of([&] { g.check_guards(); }), "llama_decode: layer 0's KV pools have a guard zone overwritten");
}

TEST(GraphReplay, TheReferenceIsEagerOnly) {
  const GraphCase& c = cached_case(QuantKind::F32, 1);
  TensorMap w = c.weights;
  DecodeGraph g(backend("reference"), build_program(c.program, c.params, w), initial_cache(c));
  try {
    g.begin_graph_capture();
    FAIL() << "the reference captured a step";
  } catch (const Unsupported& e) {
    EXPECT_STREQ(e.what(), "reference: graph capture: the reference runs eagerly only: it is the ground truth replays are judged against");
  }
}

// ---- conformance: every backend, ci shapes ----

struct ConfCase {
  std::string backend;
  std::string program;
  QuantKind kind;
  int64_t layers;
};

void PrintTo(const ConfCase& c, std::ostream* os) { *os << c.backend << " " << c.program << " " << enum_name(c.kind) << " l" << c.layers; }

class GraphConf : public ::testing::TestWithParam<ConfCase> {};

TEST_P(GraphConf, EagerStepsMatchTheReferenceNodeByNode) {
  const ConfCase& cc = GetParam();
  Backend* b = find_backend(cc.backend);
  ASSERT_NE(b, nullptr);
  const Availability a = b->availability();
  if (!a.ok) GTEST_SKIP() << "unavailable: " << a.detail;
  const GraphCase& c = cached_case(cc.kind, cc.layers, cc.program);
  NodeJudge judge(*b);
  StepsRun run;
  try {
    run = run_graph_case(*b, c, RunMode::Eager, judge.observer());
  } catch (const Unsupported& e) {
    GTEST_SKIP() << "unsupported: " << e.what();
  }
  EXPECT_EQ(judge.failed(), 0) << judge.failures();
  TensorMap w = c.weights;
  EXPECT_EQ(judge.judged(), c.params.steps * static_cast<int64_t>(build_program(c.program, c.params, w).nodes.size()));
  std::cout << "tolerances (each node's outputs against the reference on its own inputs; the first node of each op):\n"
            << judge.tolerances();
  // The end-to-end difference from the case's expected outputs, printed (the judge is the nodes').
  double worst = 0;
  for (int64_t s = 0; s < c.params.steps; ++s) {
    const Tensor& want = c.expected.at(fmt::format("out.{}", s));
    for (int64_t i = 0; i < want.numel(); ++i) worst = std::max(worst, std::abs(run.outputs[s].get(i) - want.get(i)));
  }
  std::cout << cc.backend << ": max |out - expected.out| over " << c.params.steps << " steps: " << worst << "\n";
  if (cc.backend == "reference") {
    for (int64_t s = 0; s < c.params.steps; ++s)
      EXPECT_TRUE(same_bits(run.outputs[s], c.expected.at(fmt::format("out.{}", s))));
  }
}

TEST_P(GraphConf, ReplayEqualsEagerBitForBit) {
  const ConfCase& cc = GetParam();
  Backend* b = find_backend(cc.backend);
  ASSERT_NE(b, nullptr);
  const Availability a = b->availability();
  if (!a.ok) GTEST_SKIP() << "unavailable: " << a.detail;
  const Support rs = DecodeGraph::replay_support(*b);
  if (!rs.ok) GTEST_SKIP() << "unsupported: " << rs.reason;
  const GraphCase& c = cached_case(cc.kind, cc.layers, cc.program);
  const StepsRun eager = run_graph_case(*b, c, RunMode::Eager);
  const StepsRun replay = run_graph_case(*b, c, RunMode::Replay);
  for (int64_t s = 0; s < c.params.steps; ++s) EXPECT_TRUE(same_bits(eager.outputs[s], replay.outputs[s])) << "step " << s;
  for (int64_t l = 0; l < c.params.layers; ++l) {
    EXPECT_TRUE(same_bits(eager.cache->k[l], replay.cache->k[l])) << "layer " << l;
    EXPECT_TRUE(same_bits(eager.cache->v[l], replay.cache->v[l])) << "layer " << l;
  }
}

std::vector<ConfCase> conf_cases() {
  std::vector<ConfCase> v;
  for (const std::string& b : backend_names())
    for (auto [kind, layers] : {std::pair{QuantKind::F32, int64_t{1}}, {QuantKind::F32, 2}, {QuantKind::F32, 4},
                                {QuantKind::F16, 1}, {QuantKind::Q4_K, 1}, {QuantKind::Q4_K, 2}}) {
      v.push_back({b, kLlamaDecode, kind, layers});
      if (kind == QuantKind::Q4_K) v.push_back({b, kQwen3MoeDecode, kind, layers});
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(GraphConformance, GraphConf, ::testing::ValuesIn(conf_cases()),
                         [](const ::testing::TestParamInfo<ConfCase>& i) {
                           return fmt::format("{}_{}_{}_l{}", i.param.backend, i.param.program, enum_name(i.param.kind),
                                              i.param.layers);
                         });

// ---- the device backends' recorded step ----

// The case's steps: step 0 captured (after `bake_word` was set: StepRecording::bake_state_word),
// the others replayed, except those in `eager_steps`, run eagerly between the replays (the pools then
// go from the device to the host and back).
StepsRun replay_run(Backend& b, const GraphCase& c, int64_t bake_word, const std::vector<int64_t>& eager_steps = {}) {
  TensorMap weights = c.weights;
  StepsRun run;
  run.cache = initial_cache(c);
  DecodeGraph g(b, build_program(c.program, c.params, weights), run.cache);
  g.bake_state_word_for_test(bake_word);
  for (int64_t s = 0; s < c.params.steps; ++s) {
    g.set_decode_state(c.step(s));
    if (s == 0) capture_one_step(g);
    else if (std::find(eager_steps.begin(), eager_steps.end(), s) != eager_steps.end()) g.step_eager();
    else g.replay_last_graph();
    run.outputs.push_back(g.output());
  }
  g.check_guards();
  return run;
}

int64_t steps_differing(const StepsRun& a, const StepsRun& b) {
  int64_t n = 0;
  for (size_t s = 0; s < a.outputs.size(); ++s) n += same_bits(a.outputs[s], b.outputs[s]) ? 0 : 1;
  return n;
}

class GraphDevice : public ::testing::TestWithParam<std::string> {
 protected:
  // The backend, or a skip: unavailable, or no recorded form here (the reason).
  Backend* device() {
    Backend* b = find_backend(GetParam());
    if (!b) return nullptr;
    const Availability a = b->availability();
    if (!a.ok) {
      skip_ = "unavailable: " + a.detail;
      return nullptr;
    }
    const Support rs = DecodeGraph::replay_support(*b);
    if (!rs.ok) {
      skip_ = "unsupported: " + rs.reason;
      return nullptr;
    }
    return b;
  }
  std::string skip_;
};

// The net under the replay conformance: a recording that keeps a per-step scalar as it was at
// capture (the position RoPE writes K/V at, or the context length attention reads) replays steps
// that differ from the eager ones, and the same recording without the fault replays them exactly.
TEST_P(GraphDevice, ReplayThatBakesAStateWordIsCaught) {
  Backend* b = device();
  if (!b) GTEST_SKIP() << skip_;
  const GraphCase& c = cached_case(QuantKind::F32, 2);
  const StepsRun eager = run_graph_case(*b, c, RunMode::Eager);
  EXPECT_EQ(steps_differing(eager, replay_run(*b, c, -1)), 0);
  EXPECT_EQ(steps_differing(eager, replay_run(*b, c, state_layout::kPosition)), c.params.steps - 1);
  EXPECT_EQ(steps_differing(eager, replay_run(*b, c, state_layout::kContextLen)), c.params.steps - 1);
}

// Eager steps between replays: the pools come back to the host for the eager step and go to the
// device again for the next replay; every step still equals the eager run's, the cache too.
TEST_P(GraphDevice, EagerStepsBetweenReplaysKeepTheCache) {
  Backend* b = device();
  if (!b) GTEST_SKIP() << skip_;
  const GraphCase& c = cached_case(QuantKind::F32, 2);
  const StepsRun eager = run_graph_case(*b, c, RunMode::Eager);
  const StepsRun mixed = replay_run(*b, c, -1, {2});
  EXPECT_EQ(steps_differing(eager, mixed), 0);
  for (int64_t l = 0; l < c.params.layers; ++l) {
    EXPECT_TRUE(same_bits(eager.cache->k[l], mixed.cache->k[l])) << "layer " << l;
    EXPECT_TRUE(same_bits(eager.cache->v[l], mixed.cache->v[l])) << "layer " << l;
  }
}

TEST_P(GraphDevice, ErrorsNeverAStaleRead) {
  Backend* b = device();
  if (!b) GTEST_SKIP() << skip_;
  expect_replay_errors(*b);
}

std::vector<std::string> device_backends() {
  std::vector<std::string> v;
  for (const std::string& b : backend_names())
    if (b != "reference" && b != "cpu") v.push_back(b);  // the host backends replay their launch list
  return v;
}

// Named GraphConformance/GraphDevice.<test>/<backend>_recorded: the backend's graph slice runs them.
INSTANTIATE_TEST_SUITE_P(GraphConformance, GraphDevice, ::testing::ValuesIn(device_backends()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param + "_recorded"; });

// ---- the full tier: one layer of Llama-3-8B and of Qwen3-30B-A3B, Q4_K ----

// Two steps from position 1023, block_size 16: the second opens a new block. A small vocab: a step
// reads one embedding row whatever its size.
DecodeParams model_shape(const std::string& program) {
  DecodeParams p;
  p.kind = QuantKind::Q4_K, p.layers = 1, p.head_dim = 128, p.vocab = 256, p.block_size = 16, p.ctx = 1023, p.steps = 2;
  if (program == kQwen3MoeDecode) {
    p.hidden = 2048, p.heads = 32, p.kv_heads = 4, p.ffn = 0, p.experts = 128, p.top_k = 8, p.expert_ffn = 768;
    p.rope_base = 1000000.0f, p.eps = 1e-6f;
  } else {
    p.hidden = 4096, p.heads = 32, p.kv_heads = 8, p.ffn = 14336, p.rope_base = 500000.0f;
  }
  return p;
}

class GraphFull : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(GraphFull, ModelShapeStepMatchesTheReference) {
  const auto& [bname, program] = GetParam();
  Backend& b = backend(bname);
  const Availability a = b.availability();
  if (!a.ok) GTEST_SKIP() << "unavailable: " << a.detail;
  static std::map<std::string, GraphCase> cases;
  if (!cases.count(program)) cases.emplace(program, generate_graph_case(program, model_shape(program), 4321));
  const GraphCase& c = cases.at(program);
  NodeJudge judge(b);
  const StepsRun eager = run_graph_case(b, c, RunMode::Eager, judge.observer());
  EXPECT_EQ(judge.failed(), 0) << judge.failures();
  std::cout << "tolerances (the first node of each op):\n" << judge.tolerances();
  if (!DecodeGraph::replay_support(b).ok) return;
  const StepsRun replay = run_graph_case(b, c, RunMode::Replay);
  for (int64_t s = 0; s < c.params.steps; ++s) EXPECT_TRUE(same_bits(eager.outputs[s], replay.outputs[s])) << "step " << s;
}

std::vector<std::pair<std::string, std::string>> full_cases() {
  std::vector<std::pair<std::string, std::string>> v;
  for (const std::string& b : backend_names())
    for (const char* program : {kLlamaDecode, kQwen3MoeDecode}) v.push_back({b, program});
  return v;
}

INSTANTIATE_TEST_SUITE_P(GraphConformanceFull, GraphFull, ::testing::ValuesIn(full_cases()),
                         [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& i) {
                           return fmt::format("{}_{}", i.param.first, i.param.second);
                         });

}  // namespace
}  // namespace ts::graph

// ---- touchstone graph case: a llama GGUF the test writes ----

#include <filesystem>

#include "tests/gguf_writer.h"
#include "tests/run_cli.h"
#include "tests/temp_path.h"
#include "graph/weights.h"

namespace ts::graph {
namespace {

namespace fs = std::filesystem;

// A 3-layer llama checkpoint of Q4_K matrices (F32 norms and embedding), as llama.cpp names them.
struct Checkpoint {
  DecodeParams p;
  TensorMap w;  // the program's names, for layers 0..2
};

Checkpoint checkpoint() {
  Checkpoint c;
  c.p = small(QuantKind::Q4_K, 3);
  Rng r(77);
  c.w = generate_weights(kLlamaDecode, c.p, r);
  return c;
}

uint32_t ggml_type(DType dt) { return dt == DType::F32 ? 0 : dt == DType::F16 ? 1 : 12; }

std::string write_gguf(const Checkpoint& c, const std::string& name,
                       const std::function<void(test::GgufWriter&)>& spoil = {}) {
  using gguf::ValueType;
  test::GgufWriter g;
  g.kv("general.architecture", test::gv_str("llama"));
  g.kv("llama.block_count", test::gv(ValueType::UINT32, 3));
  g.kv("llama.embedding_length", test::gv(ValueType::UINT32, c.p.hidden));
  g.kv("llama.feed_forward_length", test::gv(ValueType::UINT32, c.p.ffn));
  g.kv("llama.attention.head_count", test::gv(ValueType::UINT32, c.p.heads));
  g.kv("llama.attention.head_count_kv", test::gv(ValueType::UINT32, c.p.kv_heads));
  g.kv("llama.attention.layer_norm_rms_epsilon", test::gv_float(ValueType::FLOAT32, 1e-5));
  g.kv("llama.rope.freq_base", test::gv_float(ValueType::FLOAT32, 10000.0));
  for (const WeightSpec& s : program_weights(kLlamaDecode, c.p)) {
    const Tensor& t = c.w.at(s.name);
    std::vector<int64_t> ne = s.use == WeightSpec::Use::Norm ? std::vector<int64_t>{c.p.hidden} : std::vector<int64_t>{s.k, s.n};
    g.tensor(s.name + ".weight", ne, ggml_type(t.dtype()), std::string(reinterpret_cast<const char*>(t.data()), t.nbytes()));
  }
  if (spoil) spoil(g);
  const fs::path path = test::temp_path(name + ".gguf");
  std::ofstream(path, std::ios::binary) << g.bytes();
  return path.string();
}

void expect_one_line_error(const std::string& args, const std::string& out, const std::string& needle) {
  fs::remove(out);
  const test::CliResult r = test::run_cli(args);
  EXPECT_EQ(r.exit_code, 1) << args;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << args;
  EXPECT_FALSE(fs::exists(out + ".partial")) << args;
}

TEST(GraphCli, CaseFromALlamaGgufTakesItsTensorsUnchanged) {
  const Checkpoint c = checkpoint();
  const std::string model = write_gguf(c, "llama");
  const std::string out = test::temp_path("step.safetensors").string();
  const test::CliResult r = test::run_cli("graph case " + model + " --program llama_decode --layers 1-2 --steps 3 --ctx 2 "
                                          "--block-size 4 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const GraphCase g = graph_case_from_file(read_safetensors(out));
  EXPECT_EQ(g.params.layers, 2);
  EXPECT_EQ(g.params.kind, QuantKind::Q4_K);
  EXPECT_EQ(g.params.steps, 3);
  // The checkpoint's blk.1 and blk.2 are the program's blk.0 and blk.1, byte for byte.
  for (const char* m : {"attn_q", "attn_v", "ffn_down"}) {
    EXPECT_TRUE(same_bits(g.weights.at(fmt::format("blk.0.{}", m)), c.w.at(fmt::format("blk.1.{}", m)))) << m;
    EXPECT_TRUE(same_bits(g.weights.at(fmt::format("blk.1.{}", m)), c.w.at(fmt::format("blk.2.{}", m)))) << m;
  }
  EXPECT_TRUE(same_bits(g.weights.at("token_embd"), c.w.at("token_embd")));
  // Its expected outputs are the reference's.
  const StepsRun ref = run_graph_case(backend("reference"), g, RunMode::Eager);
  for (int64_t s = 0; s < 3; ++s) EXPECT_TRUE(same_bits(ref.outputs[s], g.expected.at(fmt::format("out.{}", s))));
}

TEST(GraphCli, BadInputIsOneLineAndNoFile) {
  const Checkpoint c = checkpoint();
  const std::string model = write_gguf(c, "llama_ok");
  const std::string out = test::temp_path("bad.safetensors").string();
  const std::string base = "graph case " + model + " --out " + out;
  expect_one_line_error(base + " --program gpt9 --layers 0-1 --steps 2", out, "unknown graph program 'gpt9'");
  expect_one_line_error(base + " --layers 0-3 --steps 2", out, "--layers 0-3: past the checkpoint's 3 layers (blk.0 .. blk.2)");
  expect_one_line_error(base + " --layers 0-1 --steps 0", out, "--steps must be positive, is 0");
  // A matrix of another kind than the others, and one of the wrong shape.
  const std::string kinded = write_gguf(c, "llama_kind", [&](test::GgufWriter& g) {
    for (auto& t : g.tensors)
      if (t.name == "blk.1.attn_k.weight") t.type = 0, t.data.assign(size_t(c.p.kv_dim() * c.p.hidden * 4), '\0');
  });
  expect_one_line_error("graph case " + kinded + " --layers 0-1 --steps 2 --out " + out, out,
                        "tensor 'blk.1.attn_k.weight' is F32, the other matrices Q4_K");
  const std::string shaped = write_gguf(c, "llama_shape", [&](test::GgufWriter& g) {
    for (auto& t : g.tensors)
      if (t.name == "blk.0.ffn_up.weight") t.ne[1] -= 1, t.data.resize(t.data.size() / size_t(c.p.ffn) * size_t(c.p.ffn - 1));
  });
  expect_one_line_error("graph case " + shaped + " --layers 0-0 --steps 2 --out " + out, out,
                        "tensor 'blk.0.ffn_up.weight' has shape [511,256], llama_decode with these parameters needs [512,256]");
}

}  // namespace
}  // namespace ts::graph
