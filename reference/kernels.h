#pragma once
// The reference's kernels, registered against the op identities (core/ops/op_refs.h) as every backend
// registers its own: the ground truth a case's expected outputs come from, and what the reference
// backend runs. The descriptions do not name their reference; an op whose reference is missing
// fails to link here, not in a description.
#include "core/host_backend.h"

namespace ts::ref {

// One kernel per op of core/ops/all_ops.inc, each ts::ref::<op name> (reference/reference.h), and
// those register_kernel() added.
const KernelTable& kernels();

// Registers the reference of an op defined outside the catalog (a test's toy op), so that its cases
// are generated and judged as the catalog's are. Before any use of the op; not thread-safe.
template <class P> void register_kernel(OpRef<P> op, std::type_identity_t<std::function<void(const P&, TensorMap&)>> fn);

// Writes op's outputs and in-outs in t from its inputs and in-outs: the reference's kernel for op.
// An Error for an op the reference does not register (an op defined outside the catalog).
void run(const Op& op, const Params& p, TensorMap& t);

namespace detail {
KernelTable& table();
}

template <class P> void register_kernel(OpRef<P> op, std::type_identity_t<std::function<void(const P&, TensorMap&)>> fn) {
  detail::table().add(op, std::move(fn));
}

}  // namespace ts::ref
