#pragma once
// The ranks this process runs among: the collective family's transport. One process is a world of
// one rank, where every collective is the identity; a process started by an MPI launcher (mpiexec -n W)
// runs in MPI's world (mpi/, built where MPI is installed), the same binary on one machine or across
// the hosts of a cluster. Backends run their collectives on host buffers through this interface (a
// device backend stages its buffers through host memory).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/ops/collective_params.h"

namespace ts {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "Open MPI v4.1.4, 4 ranks" / "one process": for reports and benchmark labels.
  virtual std::string describe() const = 0;

  // The data collectives, on host buffers of `n` elements of `dt` (recv may equal send: in place).
  // Reductions take F32 only (run_host_collective widens F16 and BF16, so their sums accumulate in F32);
  // max and min are IEEE 754-2019 maximum / minimum (NaN propagates, +0 above -0) whatever the order.
  virtual void all_reduce(const void* send, void* recv, int64_t n, DType dt, ReduceOp op) = 0;
  // recv holds size() * n elements, rank q's at q * n.
  virtual void all_gather(const void* send, void* recv, int64_t n, DType dt) = 0;
  // buf: src's elements in, every rank's out.
  virtual void broadcast(void* buf, int64_t n, DType dt, int src) = 0;

  // The harness's own small messages, never timed: every rank's text, in rank order.
  virtual std::vector<std::string> all_gather_text(const std::string& mine) = 0;
  virtual void barrier() = 0;
};

// This process's world: one rank unless a launcher started it and main() installed MPI's (set_world).
Communicator& world();
void set_world(std::unique_ptr<Communicator> w);
// A world of one rank: every collective the identity.
std::unique_ptr<Communicator> single_rank_world();

// An error every rank raised alike (agree_or_throw, agree_on_call): rank 0 alone prints it.
class RanksAgreedError : public Error {
 public:
  using Error::Error;
};

// Errors that must end every rank alike: each rank passes its own error ("" when it has none); when any
// has one, every rank throws an Error carrying the lowest such rank's message ("rank 2: ..." from a
// rank other than 0), so every rank exits 1 and rank 0 alone prints it. A rank that failed alone (its
// own file unreadable) would otherwise leave the others waiting in the next collective.
void agree_or_throw(const std::string& my_error);

}  // namespace ts
