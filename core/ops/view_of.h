#pragma once
// An op's engine view (OpDef::view) from its typed identity and parameters, for the host backends,
// whose kernels receive parameters rather than a Problem (the device planners use view_of(Problem)).
#include <any>

#include "core/op.h"
#include "core/ops/op_refs.h"

namespace ts {

template <class V, class P> V view_of(OpRef<P> op, const P& p) { return view_as<V>(op_or_throw(op.name), Params::of(p)); }

}  // namespace ts
