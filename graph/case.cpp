#include "graph/case.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "graph/weights.h"

namespace ts::graph {

namespace {
std::string pool_name(const char* kv, int64_t l) { return fmt::format("cache.{}.{}", kv, l); }
}  // namespace

StepState GraphCase::step(int64_t s) const {
  StepState st;
  st.token = state.at("state.tokens").as<uint32_t>()[s];
  st.position = state.at("state.positions").as<uint32_t>()[s];
  const int64_t w = params.max_blocks();
  const uint32_t* row = state.at("state.block_tables").as<uint32_t>() + s * w;
  st.table.assign(row, row + w);
  return st;
}

std::shared_ptr<KvCache> initial_cache(const GraphCase& c) {
  const DecodeParams& p = c.params;
  auto cache = std::make_shared<KvCache>(p.layers, p.num_blocks(), p.kv_heads, p.block_size, p.head_dim, p.act_dtype());
  for (int64_t l = 0; l < p.layers; ++l) {
    cache->k[l] = c.cache.at(pool_name("k", l));
    cache->v[l] = c.cache.at(pool_name("v", l));
  }
  return cache;
}

StepsRun run_graph_case(Backend& b, const GraphCase& c, RunMode mode, const NodeObserver& observe) {
  TensorMap weights = c.weights;  // the program takes its weights; the case keeps its own
  StepsRun run;
  run.cache = initial_cache(c);
  DecodeGraph g(b, build_program(c.program, c.params, weights), run.cache);
  for (int64_t s = 0; s < c.params.steps; ++s) {
    g.set_decode_state(c.step(s));
    if (mode == RunMode::Eager) {
      g.step_eager(observe);
    } else if (s == 0) {
      g.begin_graph_capture();
      g.step_eager(observe);
      g.end_graph_capture();
    } else {
      g.replay_last_graph();
    }
    run.outputs.push_back(g.output());
  }
  g.check_guards();
  return run;
}

GraphCase generate_graph_case(const std::string& program, const DecodeParams& p, uint64_t seed, bool expected) {
  check_program(program);
  check_params(program, p);
  Rng r(seed);
  TensorMap weights = generate_weights(program, p, r);
  GraphCase c = graph_case_with_weights(program, p, std::move(weights), r.next(), expected);
  c.seed = seed;  // the case's own: the one that made its weights and, through them, the rest
  return c;
}

GraphCase graph_case_with_weights(const std::string& program, const DecodeParams& p, TensorMap weights, uint64_t seed,
                                  bool expected) {
  check_program(program);
  check_params(program, p);
  GraphCase c;
  c.program = program, c.params = p, c.seed = seed;
  c.weights = std::move(weights);
  Rng r(seed);
  // The table: a random permutation of the pool's blocks, the sequence's blocks first; entries past
  // the blocks a step uses point at the last, which nothing ever writes (NaN: a read of it shows).
  std::vector<uint32_t> perm(static_cast<size_t>(p.num_blocks()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<uint32_t>(i);
  for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[static_cast<size_t>(r.below(static_cast<int64_t>(i) + 1))]);
  const int64_t w = p.max_blocks();
  Tensor tokens(DType::U32, {p.steps}), positions(DType::U32, {p.steps}), tables(DType::U32, {p.steps, w});
  for (int64_t s = 0; s < p.steps; ++s) {
    tokens.as<uint32_t>()[s] = static_cast<uint32_t>(r.below(p.vocab));
    positions.as<uint32_t>()[s] = static_cast<uint32_t>(p.ctx + s);
    const int64_t used = (p.ctx + s + 1 + p.block_size - 1) / p.block_size;
    for (int64_t i = 0; i < w; ++i) tables.as<uint32_t>()[s * w + i] = i < used ? perm[i] : perm.back();
  }
  c.state.emplace("state.tokens", std::move(tokens));
  c.state.emplace("state.positions", std::move(positions));
  c.state.emplace("state.block_tables", std::move(tables));
  // The prompt's keys and values: N(0, 1) at positions [0, ctx), through the table's blocks.
  for (int64_t l = 0; l < p.layers; ++l)
    for (const char* kv : {"k", "v"}) {
      Tensor pool(p.act_dtype(), {p.num_blocks(), p.kv_heads, p.block_size, p.head_dim});
      pool.fill(std::numeric_limits<double>::quiet_NaN());
      for (int64_t pos = 0; pos < p.ctx; ++pos)
        for (int64_t h = 0; h < p.kv_heads; ++h)
          for (int64_t d = 0; d < p.head_dim; ++d) {
            const int64_t blk = perm[static_cast<size_t>(pos / p.block_size)];
            pool.set(((blk * p.kv_heads + h) * p.block_size + pos % p.block_size) * p.head_dim + d, r.normal());
          }
      c.cache.emplace(pool_name(kv, l), std::move(pool));
    }
  validate_graph_case(c);
  if (!expected) return c;
  StepsRun ref = run_graph_case(backend("reference"), c, RunMode::Eager);
  for (int64_t s = 0; s < p.steps; ++s) c.expected.emplace(fmt::format("out.{}", s), std::move(ref.outputs[s]));
  for (int64_t l = 0; l < p.layers; ++l) {
    c.expected.emplace(pool_name("k", l), std::move(ref.cache->k[l]));
    c.expected.emplace(pool_name("v", l), std::move(ref.cache->v[l]));
  }
  return c;
}

namespace {
void check_tensor(const TensorMap& t, const std::string& name, DType dt, const Shape& shape, const std::string& what) {
  auto it = t.find(name);
  check(it != t.end(), "graph case: {} '{}' is missing", what, name);
  check(it->second.dtype() == dt, "graph case: {} '{}' is {}, the program needs {}", what, name,
        dtype_name(it->second.dtype()), dtype_name(dt));
  check(it->second.shape() == shape, "graph case: {} '{}' has shape {}, the program needs {}", what, name,
        shape_str(it->second.shape()), shape_str(shape));
}
}  // namespace

void validate_graph_case(const GraphCase& c) {
  const DecodeParams& p = c.params;
  check_params(c.program, p);
  const std::vector<WeightSpec> specs = program_weights(c.program, p);
  for (const WeightSpec& s : specs) check_tensor(c.weights, s.name, s.dtype, s.shape, "weight");
  check(c.weights.size() == specs.size(), "graph case: {} tensors where {} has {} weights", c.weights.size(), c.program,
        specs.size());
  const Shape pool{p.num_blocks(), p.kv_heads, p.block_size, p.head_dim};
  for (int64_t l = 0; l < p.layers; ++l)
    for (const char* kv : {"k", "v"}) check_tensor(c.cache, pool_name(kv, l), p.act_dtype(), pool, "KV pool");
  check(static_cast<int64_t>(c.cache.size()) == 2 * p.layers, "graph case: {} KV pools for {} layers", c.cache.size(), p.layers);
  const int64_t w = p.max_blocks();
  check_tensor(c.state, "state.tokens", DType::U32, {p.steps}, "state tensor");
  check_tensor(c.state, "state.positions", DType::U32, {p.steps}, "state tensor");
  check_tensor(c.state, "state.block_tables", DType::U32, {p.steps, w}, "state tensor");
  check(c.state.size() == 3, "graph case: {} state tensors, a step has 3", c.state.size());
  for (int64_t s = 0; s < p.steps; ++s) {
    const StepState st = c.step(s);
    check(st.token < p.vocab, "graph case: state.tokens[{}] is {}, not below vocab {}", s, st.token, p.vocab);
    check(st.position == p.ctx + s, "graph case: state.positions[{}] is {}; step {} appends at ctx + {} = {}", s,
          st.position, s, s, p.ctx + s);
    const int64_t used = (st.position + 1 + p.block_size - 1) / p.block_size;
    std::set<uint32_t> seen;
    for (int64_t i = 0; i < used; ++i) {
      check(st.table[i] < p.num_blocks(), "graph case: state.block_tables[{},{}] is {}, the pools have {} blocks", s, i,
            st.table[i], p.num_blocks());
      check(seen.insert(st.table[i]).second, "graph case: state.block_tables[{}] maps two logical blocks to block {}", s,
            st.table[i]);
      if (s > 0 && i < (st.position + p.block_size - 1) / p.block_size)
        check(st.table[i] == c.step(s - 1).table[i],
              "graph case: state.block_tables[{},{}] moves a block the previous step used ({} -> {})", s, i,
              c.step(s - 1).table[i], st.table[i]);
    }
  }
  if (c.expected.empty()) return;
  for (int64_t s = 0; s < p.steps; ++s)
    check_tensor(c.expected, fmt::format("out.{}", s), p.act_dtype(), {1, p.hidden}, "expected output");
  for (int64_t l = 0; l < p.layers; ++l)
    for (const char* kv : {"k", "v"}) check_tensor(c.expected, pool_name(kv, l), p.act_dtype(), pool, "expected KV pool");
  check(static_cast<int64_t>(c.expected.size()) == p.steps + 2 * p.layers, "graph case: {} expected tensors, the program has {}",
        c.expected.size(), p.steps + 2 * p.layers);
}

SafetensorsFile graph_case_to_file(const GraphCase& c) {
  SafetensorsFile f;
  f.metadata = params_to_map(c.params);
  f.metadata["family"] = "graph";
  f.metadata["program"] = c.program;
  if (c.seed) f.metadata["seed"] = std::to_string(*c.seed);
  for (const auto* m : {&c.weights, &c.cache, &c.state})
    for (const auto& [n, t] : *m) f.tensors.emplace(n, t);
  for (const auto& [n, t] : c.expected) f.tensors.emplace("expected." + n, t);
  return f;
}

bool is_graph_case(const SafetensorsFile& f) {
  auto it = f.metadata.find("family");
  return it != f.metadata.end() && it->second == "graph";
}

GraphCase graph_case_from_file(SafetensorsFile f) {
  check(is_graph_case(f), "not a graph case (its metadata has no \"family\": \"graph\")");
  GraphCase c;
  auto prog = f.metadata.find("program");
  check(prog != f.metadata.end(), "graph case: no \"program\" in the metadata");
  c.program = prog->second;
  check_program(c.program);
  if (auto s = f.metadata.find("seed"); s != f.metadata.end()) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s->second.data(), s->second.data() + s->second.size(), v);
    check(ec == std::errc() && end == s->second.data() + s->second.size(), "graph case: seed '{}' is not a number", s->second);
    c.seed = v;
  }
  ParamMap m = f.metadata;
  m.erase("seed");
  c.params = params_from_metadata(c.program, m);
  for (auto& [n, t] : f.tensors) {
    TensorMap* to = &c.weights;
    std::string name = n;
    if (n.rfind("expected.", 0) == 0) to = &c.expected, name = n.substr(9);
    else if (n.rfind("cache.", 0) == 0) to = &c.cache;
    else if (n.rfind("state.", 0) == 0) to = &c.state;
    to->emplace(std::move(name), std::move(t));
  }
  validate_graph_case(c);
  return c;
}

}  // namespace ts::graph
