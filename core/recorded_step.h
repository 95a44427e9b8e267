#pragma once
// A whole step of prepared launches recorded once on a device and resubmitted with new state: the
// recorded form of a captured graph (graph/graph.h) on a backend whose launches run on buffers of
// their own (vulkan: one command buffer; opencl: one cl_khr_command_buffer). The host backends need
// none: their launches read the host tensors the graph's binds fill, so a list of them replays.
//
// The recording is described here in the launches' own terms (a node's tensor is its name in the
// TensorMap given to prepare()), so core knows nothing of a graph program and a backend nothing of one.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts {

class Launch;

struct StepRecording {
  // `bytes` of a tensor's data from byte `src_byte` into the node's tensor `dst` at byte `dst_byte`
  // (data bytes: the guard zones are the backend's business). `src_node` kState: the state buffer's
  // words, `src_byte` from its first word.
  static constexpr int64_t kState = -1;
  struct Copy {
    int64_t src_node = kState;
    std::string src, dst;
    int64_t src_byte = 0, dst_byte = 0, bytes = 0;
  };
  // The node's tensor `tensor` is pool `pool` (of `pools` below), bound directly: the pools stay on
  // the device between steps and every node that reads or writes one sees the same buffer.
  struct PoolUse {
    std::string tensor;
    int64_t pool = 0;
  };
  // The node's input `tensor` is node `src_node`'s tensor `src`, whole: the backend binds that
  // node's buffer in the input's place, with no copy. The graph shares only what a copy would have
  // carried unchanged: a whole tensor of the same size, into an input the node never writes, from the
  // buffer that holds it (never another share's), so no reader changes another node's data.
  struct Share {
    std::string tensor;
    int64_t src_node = 0;
    std::string src;
    int64_t bytes = 0;  // the tensor's data bytes, the same on both sides
  };
  struct Node {
    Launch* launch = nullptr;  // prepared by the same backend; kept alive by the caller
    std::vector<Copy> copies;  // run before the node's launch, in order
    std::vector<PoolUse> pools;
    std::vector<Share> shares;
    std::vector<std::string> tensors;  // those in the launch's own buffers (not pools, not shares): for guard checks
  };
  std::vector<Node> nodes;
  std::vector<uint32_t> state;  // the state buffer's words at recording (its size is the buffer's)
  std::vector<Tensor*> pools;   // the host's pools: their shapes, and their contents uploaded at recording
  int64_t output_node = 0;      // the tensor a replay brings back
  std::string output;
  uint64_t output_bytes = 0;    // its storage, guards included

  // Test only: a copy out of the state buffer that reads word `bake_state_word` is recorded with the
  // word's value at recording time instead (what a push constant does), so a replay keeps it. The
  // replay conformance must then fail: it shows the net catches a kernel that bakes a per-step scalar.
  int64_t bake_state_word = -1;
};

// A recorded step on the device. Its buffers are allocated once, at recording.
class RecordedStep {
 public:
  virtual ~RecordedStep() = default;
  // The host writes a step's state (as many words as at recording) into the device state buffer.
  virtual void write_state(std::span<const uint32_t> words) = 0;
  // One submit, one wait, and the output tensor's storage (guards included) downloaded into `out`.
  virtual void replay(Tensor& out) = 0;
  // Seconds the last replay took on the device's own timer (the wall time where it has none).
  virtual double last_seconds() const = 0;
  // The pools into the device (after eager steps wrote the host's) and back to the host (storage,
  // guards included), in the order of StepRecording::pools.
  virtual void upload_pools(std::span<Tensor* const> pools) = 0;
  virtual void download_pools(std::span<Tensor* const> pools) = 0;
  // Every node tensor's device buffer back into the tensors its launch was prepared on (storage,
  // guards included): what a guard check reads.
  virtual void download_nodes() = 0;
};

}  // namespace ts
