#pragma once
// What every backend's collective shares (the collective family): the call a case makes on this rank,
// the checks before any data moves, the run on host buffers, and the harness's gathering of every
// rank's output afterwards. A backend runs x.{rank} -> out.{rank}; a device backend stages its buffers
// through host memory around run_host_collective.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.h"
#include "core/comm.h"

namespace ts {

bool is_collective(const Op& op);

// One rank's collective: what the case asks of it.
struct CollectiveCall {
  std::string op;  // all_reduce, all_gather, broadcast
  DType dtype = DType::F32;
  int64_t world_size = 1, len = 0, src_rank = 0;
  ReduceOp reduce = ReduceOp::Sum;
  int64_t out_len() const { return op == "all_gather" ? world_size * len : len; }
  // "all_reduce reduce=sum F32 len=1021 world_size=4": what the ranks compare before data moves.
  std::string describe() const;
};
CollectiveCall call_of(const AllReduceParams& p, DType dt);
CollectiveCall call_of(const AllGatherParams& p, DType dt);
CollectiveCall call_of(const CollectiveBroadcastParams& p, DType dt);
CollectiveCall collective_call(const Problem& pr);  // the call_of of its op; an Error for another op

// Of any op of the family (the data collectives and the tensor-parallel pair): the case's world, and
// what the ranks compare before data moves ("tp_gemm_pair F32 hidden=16 k=67 m=5 n=33 world_size=2").
int64_t case_world_size(const Problem& pr);
std::string describe_case_call(const Problem& pr);

// Whether this process's world runs the case: a "no" naming both worlds (the conformance matrix
// under mpiexec -n 2 skips the cases of other worlds with it).
Support world_runs(const Problem& pr);
// A device backend's collective support: the float dtypes its staging copies carry (F32, F16, BF16),
// then world_runs. `backend` names it in the "no" ("OpenCL collective").
Support device_collective_support(const Problem& pr, std::string_view backend);

// Before any data moves: the case's world_size must be the communicator's, and every rank must make
// the same call (op, dtype, len, reduce, src_rank). Otherwise an Error on every rank, naming the
// first rank that differs from rank 0 and both calls.
void agree_on_call(const CollectiveCall& c);
// The same for any case of the family (describe_case_call is what the ranks compare).
void agree_on_case(const Problem& pr);

// This rank's collective on host buffers: x holds len elements, out out_len(). F16 and BF16 reductions
// are widened to F32 first and rounded once at the end, so their sums accumulate in F32.
void run_host_collective(const CollectiveCall& c, const void* x, void* out);

// A device backend's collective: this rank's x.{rank} and out.{rank} live in the device's buffers
// (uploaded whole, guards included, at prepare); execute() stages x through host memory, runs the
// host collective and stages the result into out's buffer. The two staging copies are timed apart from
// the collective (staging_seconds), so a report can say what the device's distance from the host costs.
// Where the driver lets the host reach the device's buffers themselves (memory the device shares with
// the host: PoCL, lavapipe, an integrated GPU), the backend maps them instead (maps() true): the host
// collective then reads x and writes out where they lie, and staging_seconds is the mapping's cost.
// A backend supplies its own buffer paths; its upload at prepare and its download at finish() are
// the same ones its other ops use.
class StagedCollectiveLaunch : public Launch {
 public:
  StagedCollectiveLaunch(const Problem& pr, TensorMap& io);
  void execute() override;
  double last_seconds() const override { return seconds_; }
  void upload_inputs() override;
  void finish() override;
  // Of the last execute(): seconds spent in the two staging copies (device -> host, host -> device),
  // or in mapping and unmapping the buffers where the launch maps them.
  double staging_seconds() const { return staging_; }
  // Whether the launch maps the device's buffers rather than copying them.
  virtual bool maps() const { return false; }

 protected:
  // Called once by the backend's constructor after its buffers exist: the ranks agree on the call.
  void agree();
  // The rank's tensor names and the host staging buffers (data only: no guards between device copies).
  const std::string& x_name() const { return x_; }
  const std::string& out_name() const { return out_; }
  // Whole-storage copies between io's tensor `name` and its device buffer (guards included).
  virtual void upload(const std::string& name) = 0;
  virtual void download(const std::string& name) = 0;
  // Data-only copies between a device buffer and host memory of `bytes`: the staging of execute().
  virtual void read_data(const std::string& name, void* host, size_t bytes) = 0;
  virtual void write_data(const std::string& name, const void* host, size_t bytes) = 0;
  // Where maps(): the data of the tensor's buffer (`bytes`, more than 0) as host memory, for reading
  // (x) or for writing (out, whose old values are not kept), and its release, after which the device
  // sees what the host wrote.
  // The maps and unmaps may be queued: execute() calls maps_ready() after both maps, before the host
  // touches them, and unmaps_ready() after both unmaps (one wait each, not one per buffer).
  virtual void* map_data(const std::string& /*name*/, size_t /*bytes*/, bool /*write*/) { return nullptr; }
  virtual void unmap_data(const std::string& /*name*/, void* /*host*/) {}
  virtual void maps_ready() {}
  virtual void unmaps_ready() {}

  TensorMap& io_;

 private:
  CollectiveCall call_;
  std::string x_, out_;
  size_t x_bytes_ = 0, out_bytes_ = 0;  // the data of x and out
  std::vector<std::byte> stage_x_, stage_out_;
  double seconds_ = 0, staging_ = 0;
};

// TOUCHSTONE_COLLECTIVE_STAGING=copy: a device backend stages its collective's buffers through host
// memory even where it could map them, so that the staged path is tested and measured on a machine
// whose devices share the host's memory. Unset (or "map"): map where the driver allows.
bool collective_staging_forced();

// After a run: every rank's out.{r} copied into every rank's io (each rank computed only its own), so
// every rank judges the same outputs and reaches the same verdict. The harness's step, never timed.
void gather_rank_outputs(const Problem& pr, TensorMap& io);

}  // namespace ts
