#pragma once
// Which memory roof binds an op, from its declared tensors.
#include "core/op.h"

namespace ts {

// The share of an op's traffic that is writes, counted from its declared tensors as the cost model
// counts bytes (each input read once, each output written once, an in-out both): bytes written over
// bytes read. An op below kReadDominated hardly writes (a decode GEMV, KV decode): it is bound by reads,
// and its memory roof is the read-only stream, not the triad. Infinity for an op that reads nothing.
double write_share(const Op& op, const Params& p, DType dt);
inline constexpr double kReadDominated = 0.1;

}  // namespace ts
