#pragma once
// A program as a graph of the catalog's ops, and its two ways of running on a backend:
//  - eager: every node validated, planned (Backend::prepare), launched and brought back, each step;
//  - captured: one eager step inside a capture window keeps its prepared launches; a replay runs them
//    again with no validation, no planning and no allocation, the per-step scalars (token, position,
//    context length, block table) read from the state buffer the caller wrote (set_decode_state).
// Nodes meet through binds: before its launch a node copies the tensors it reads from the nodes that
// wrote them and from the state buffer, and takes its layer's K/V pools from the cache (a swap, no
// copy), giving them back after.
// A host backend's capture is the list of its prepared launches, replayed with the binds on the host.
// A device backend's is one recorded step (core/recorded_step.h, graph/recording.h): a whole input
// binds the buffer of the node that wrote it, the other binds become device copies out of the nodes'
// buffers and out of a device state buffer, the pools live on the device from the
// capture on (brought back to the host cache when an eager step or a check needs them), and a replay
// is one submit, one wait and one download of the output.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/backend.h"
#include "graph/program.h"

namespace ts::graph {

struct Bind {
  enum class Kind { Copy, Pool };
  Kind kind = Kind::Copy;
  Tensor* dst = nullptr;  // in the node's own tensors
  // Copy: `count` elements of src from src_offset to dst at dst_offset (the same dtype).
  const Tensor* src = nullptr;
  int64_t src_offset = 0, dst_offset = 0, count = 0;
  // Pool: layer `layer`'s V pool when `value`, else its K pool.
  int64_t layer = 0;
  bool value = false;
};

struct Node {
  std::string label;  // "blk.0.attn_q": the program's name of the step it does
  Problem problem;
  TensorMap io;
  std::vector<Bind> binds;
};

// A program built for one parameter set: its nodes in launch order, the state buffer they read, and
// the tensor that holds a step's output (the final norm's).
struct Program {
  std::string name;
  DecodeParams params;
  std::unique_ptr<Tensor> state;  // U32 [state_words]; held apart so binds point at it wherever the program moves
  std::vector<std::unique_ptr<Node>> nodes;
  const Tensor* output = nullptr;
};

// The program `name` over `weights` (docs/catalog.md, "Family graph": names, shapes, dtypes), which are
// moved into the nodes. An Error naming the first missing or mis-shaped weight.
Program build_program(const std::string& name, const DecodeParams& p, TensorMap& weights);

// Called after each node of an eager step with the node's tensors as they were before its launch
// (its binds applied): a judge runs the reference on those and compares.
using NodeObserver = std::function<void(const Node& node, const TensorMap& before)>;

class DecodeGraph {
 public:
  DecodeGraph(Backend& b, Program program, std::shared_ptr<KvCache> cache);

  // Whether `b` replays a captured step, and why not: the reference runs eagerly only, by design.
  static Support replay_support(Backend& b);

  // Writes the next step's state (state_layout) into the state buffer after checking every index it
  // drives: the token below vocab, the position below the RoPE tables' rows, each table entry the
  // step reads inside the cache. An Error when `words` is shorter than the program reads.
  void set_decode_state(std::span<const uint32_t> words);
  void set_decode_state(const StepState& s) { set_decode_state(s.words(program_.params)); }

  void step_eager(const NodeObserver& observe = {});
  // The capture window: the one eager step run inside it is recorded.
  void begin_graph_capture();
  void end_graph_capture();
  // Runs the recorded step on the state buffer's current values.
  void replay_last_graph();
  // Drops the recorded step (its cache went away, or the caller wants a new one).
  void reset_graph();
  bool captured() const { return captured_; }

  const Tensor& output() const { return *program_.output; }
  const Program& program() const { return program_; }
  int64_t launches_per_step() const { return static_cast<int64_t>(program_.nodes.size()); }
  // Every node's outputs' guard zones intact; an Error naming the first that is not.
  // On a device capture the device's tensors and pools are brought back first.
  void check_guards();
  // The KV cache's pools as the last step left them: after device replays, downloaded into the cache.
  void sync_cache();
  // Test only (StepRecording::bake_state_word): the next device capture records state word `word` as
  // its value at capture time, so its replays keep it (-1: none).
  void bake_state_word_for_test(int64_t word) { bake_state_word_ = word; }

  // What the eager path does that a replay must not: plans (Backend::prepare) and validations.
  struct Counters {
    int64_t prepares = 0, validations = 0;
  };
  const Counters& counters() const { return counters_; }
  // The seconds the last step's launches report on their own timers (device timestamps where the
  // backend has them), summed: a step's wall time less this is its host time.
  double last_launch_seconds() const { return launch_seconds_; }

 private:
  void apply_binds(Node& n, KvCache& cache);
  void record_on_device(KvCache& cache);
  std::vector<Tensor*> pools_of(KvCache& cache) const;
  void return_pools(Node& n, KvCache& cache);
  KvCache& live_cache(const char* what);

  Backend& b_;
  Program program_;
  std::weak_ptr<KvCache> cache_;
  bool capturing_ = false, captured_ = false, stepped_in_window_ = false;
  std::vector<std::unique_ptr<Launch>> launches_;
  uint64_t captured_generation_ = 0;
  int64_t captured_blocks_ = 0;
  // A device backend's recorded step, and which side holds the newer pools: the device after a
  // replay, the host after an eager step that followed the recording.
  std::unique_ptr<RecordedStep> recorded_;
  bool device_pools_newer_ = false, host_pools_newer_ = false;
  int64_t bake_state_word_ = -1;
  size_t output_node_ = 0;  // the output's node and name there, for the recorded step's download
  std::string output_name_;
  Counters counters_;
  double launch_seconds_ = 0;
};

}  // namespace ts::graph
