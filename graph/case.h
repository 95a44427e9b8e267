#pragma once
// A graph case (docs/catalog.md, "Family graph"): a program, its parameters, its weights, the KV cache
// before the first step, the state of every step, and each step's expected output, as one
// safetensors file. Metadata: "family": "graph", "program", every parameter, "seed" when generated.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/safetensors.h"
#include "graph/graph.h"

namespace ts::graph {

struct GraphCase {
  std::string program = kLlamaDecode;
  DecodeParams params;
  TensorMap weights;
  // "cache.k.<layer>", "cache.v.<layer>": the pools before the first step (unused slots NaN).
  TensorMap cache;
  // "state.tokens" U32 [steps], "state.positions" U32 [steps], "state.block_tables" U32 [steps, max_blocks].
  TensorMap state;
  // "out.<step>" [1, hidden]; "cache.k.<layer>", "cache.v.<layer>" after the last step. Empty: none.
  TensorMap expected;
  std::optional<uint64_t> seed;

  StepState step(int64_t s) const;
};

// A generated case: random weights, a prompt of `ctx` positions already in the cache, a random token
// per step, the table growing a block at a time through a random permutation of the pool's blocks;
// expected outputs from the reference, run eagerly.
// Without `expected`, no expected outputs (a benchmark's inputs: the reference is not run).
GraphCase generate_graph_case(const std::string& program, const DecodeParams& p, uint64_t seed, bool expected = true);

// The same around weights the caller has (a checkpoint's): the state, the prompt's cache and the
// expected outputs drawn and computed as above. The weights are validated as a case's are.
GraphCase graph_case_with_weights(const std::string& program, const DecodeParams& p, TensorMap weights, uint64_t seed,
                                  bool expected = true);

// Every check a case's tensors get before any backend sees them: each tensor present with its dtype
// and shape, no stray ones, tokens below vocab, positions ctx + s, each table row inside the pool,
// distinct, and keeping the previous row's blocks. An Error naming the first that is not.
void validate_graph_case(const GraphCase& c);

SafetensorsFile graph_case_to_file(const GraphCase& c);
GraphCase graph_case_from_file(SafetensorsFile f);  // validated
bool is_graph_case(const SafetensorsFile& f);

// The case's cache before its first step, as the program's KV cache.
std::shared_ptr<KvCache> initial_cache(const GraphCase& c);

enum class RunMode { Eager, Replay };
struct StepsRun {
  std::vector<Tensor> outputs;  // one per step
  std::shared_ptr<KvCache> cache;
};
// All of the case's steps on `b`: eagerly, or the first step captured and the rest replayed.
StepsRun run_graph_case(Backend& b, const GraphCase& c, RunMode mode, const NodeObserver& observe = {});

}  // namespace ts::graph
