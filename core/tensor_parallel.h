#pragma once
// The tensor-parallel gemm pair (tp_gemm_pair, the collective family) on any backend, composed of the
// backend's own ops: on rank r its gemm computes Y_r = x a.r^T, its gemm again P_r = Y_r b.r^T, and its
// all_reduce sums the P_q into out.r. The three launches are prepared once on the backend; they meet
// through host copies of Y_r and P_r between them (as the graph family's eager steps do), so a device
// backend's launches keep their own buffers and the pair needs nothing of the backend beyond the ops.
#include <memory>

#include "core/backend.h"

namespace ts {

bool is_tensor_parallel(const Op& op);

// Whether `b` runs the pair: this process's world is the case's, and `b` runs both gemms and the
// all_reduce of the case's dtype (a "no" naming the step that it does not).
Support tensor_parallel_support(Backend& b, const Problem& pr);

// The pair on this rank: x, a.{rank}, b.{rank} -> out.{rank} of `io`. The ranks agree on the case
// before any data moves (core/collective.h, agree_on_case).
std::unique_ptr<Launch> prepare_tensor_parallel(Backend& b, const Problem& pr, TensorMap& io);

}  // namespace ts
