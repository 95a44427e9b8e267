#pragma once
// A captured step's recorded form (core/recorded_step.h), described from the program: which binds a
// device carries out as copies, which as the writer's own buffer bound in place (a share), and which
// tensors are the K/V pools.
#include <span>
#include <vector>

#include "core/recorded_step.h"
#include "graph/graph.h"

namespace ts::graph {

// The recording of `program`'s step over the launches its capture step prepared (one a node, in node
// order) and the cache's pools (layer l's K at 2 l, its V at 2 l + 1). A bind becomes a share where
// a copy would carry a whole tensor unchanged into an input its node never writes (the input then
// reads the buffer of the node that wrote the tensor; a share of a share is resolved to that writer),
// else a copy; every copy's source is resolved the same way, since a shared input's own buffer is
// never written.
StepRecording step_recording(const Program& program, std::span<Launch* const> launches, std::vector<Tensor*> pools);

}  // namespace ts::graph
