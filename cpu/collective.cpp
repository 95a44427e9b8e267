// The collective family on host buffers: this rank's x.{rank} -> out.{rank} through the process's world
// (core/comm.h; MPI under a launcher). The checks that every rank makes the same call run at prepare,
// before any data moves; execute is the transport's collective alone (all_reduce of F32 is exactly
// MPI_Allreduce from x into out), so its time is the collective's.
#include "core/collective.h"
#include "cpu/kernels.h"

namespace ts::cpu {

namespace {

template <class P> void add_collective_op(KernelTable& k, OpRef<P> op) {
  k.add_prepared(
      op,
      [](const P& p, TensorMap& t) -> HostRun {
        const int rank = world().rank();
        const Tensor& x = t.at(rank_tensor("x", rank));
        Tensor& out = t.at(rank_tensor("out", rank));
        const CollectiveCall c = call_of(p, x.dtype());
        agree_on_call(c);
        return [c, &x, &out] { run_host_collective(c, x.data(), out.data()); };
      },
      // A case over another number of ranks than this process's world: a skip naming both.
      [](const Problem& pr) { return world_runs(pr); });
}

}  // namespace

void add_collective(KernelTable& k) {
  add_collective_op(k, ops::all_reduce);
  add_collective_op(k, ops::all_gather);
  add_collective_op(k, ops::broadcast);
}

}  // namespace ts::cpu
