#pragma once
// What a backend is. A backend is a C++ type satisfying BackendType (a name and a factory); its
// instances implement Backend, which mirrors the seed's Backend trait in one generic entry point:
// prepare(op, params, tensors) binds one op invocation to device buffers, and the returned Launch
// runs it (again and again, for benchmarks) and brings the outputs back.
//
// The harness validates every case (Op::validate) before prepare(); kernels may assume valid input.
#include <concepts>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_roofs.h"
#include "core/op.h"
#include "core/recorded_step.h"

namespace ts {

struct Availability {
  bool ok = false;
  std::string detail;  // the device when ok, the reason when not
};

struct Support {
  bool ok = false;
  std::string reason;  // why not, when !ok
  static Support yes() { return {true, {}}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// One op invocation bound to a backend's buffers.
class Launch {
 public:
  virtual ~Launch() = default;
  // Runs the op once and waits for it.
  virtual void execute() = 0;
  // Seconds the last execute() took on the backend's own timer (device timestamps where it has them).
  virtual double last_seconds() const = 0;
  // Copies every output and in-out tensor back into the tensors given to prepare(), guards included.
  virtual void finish() = 0;
  // Writes the current values of the inputs and in-outs given to prepare() (the caller has put a new
  // step's values there: other lengths, tables, ids, positions, data, of the same shapes, validated)
  // into the buffers the prepared launch runs on; the next execute() runs on them with the plan made
  // at prepare(). A plan therefore never depends on a tensor's values, only on the problem's shapes
  // and parameters: work that depends on values is decided on the device (what a captured graph,
  // replayed with new per-step state, needs). Nothing to copy for a backend that runs on the host
  // tensors themselves; one that repacked inputs at prepare (weights into its own layout) repacks them.
  virtual void upload_inputs() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Availability availability() = 0;
  // Whether this backend runs this problem: decided on the whole problem (op, variant, parameters,
  // every tensor's dtype), so a backend may run Q4_K but not Q6_K, or head_dim 128 but not 80, and
  // says why not. The matrix shows a "no" as a skip with the reason.
  virtual Support supports(const Problem& pr) = 0;
  // Whether two runs of the same case give bit-identical outputs (atomics or split-k may not).
  virtual bool deterministic(const Op& /*op*/) { return true; }
  // The tolerance this backend's `output` of `pr` is judged by when it differs from the op's: a kernel
  // that trades exactness for speed by design (activations quantized on the fly) states its own bound
  // and its derivation. None: the op's tolerance.
  virtual std::optional<Tolerance> tolerance(const Problem& /*pr*/, const std::string& /*output*/,
                                             const TensorMap& /*inputs*/) {
    return std::nullopt;
  }
  // A validated problem this backend supports; `io` holds every declared tensor (outputs allocated)
  // and must outlive the Launch.
  virtual std::unique_ptr<Launch> prepare(const Problem& pr, TensorMap& io) = 0;
  // Empties the caches of a device with memory of its own (a GPU's L2: 50 MB on an H100 holds a whole
  // decode GEMV's weights), so that a cold benchmark iteration reads from that memory; called outside
  // the timed region. True when it did: the op's data is then in no host cache, and the benchmark
  // skips the host's flush. False (the default) for a device on the host's memory (cpu, PoCL, lavapipe).
  virtual bool evict_device_caches() { return false; }
  // Host threads the backend keeps for its kernels, around a benchmark's cold-cache eviction (both
  // outside the timed region): parked before it, so that they take no core from the eviction's
  // threads, and running after it, so that the timed call starts with them awake, as in a decode
  // loop where one kernel follows another. No-ops for a backend with no threads of its own.
  virtual void park_host_threads() {}
  virtual void wake_host_threads() {}

  // The device's own roofs (core/device_roofs.h), for a backend with a device of its own kind (a GPU
  // API, even where its driver runs on the host, as lavapipe and PoCL do): whether it measures them
  // at all (the benchmark registers baseline/device_<roof>/<backend> only then), whether it can
  // measure this one here (F16 needs the device's F16 arithmetic), and one roof kernel bound to the
  // case's tensors, sized for the device (a stream several times its last-level cache).
  virtual bool has_device_roofs() const { return false; }
  virtual Support roof_support(Roof /*r*/) { return Support::no("no device roofs on this backend"); }
  struct RoofRun {
    RoofCase c;                     // the tensors; the launch's finish() brings the outputs back
    std::unique_ptr<Launch> launch;
    std::string detail;             // the sizes and the device, for the benchmark's label
  };
  virtual std::unique_ptr<RoofRun> prepare_roof(Roof r);

  // A device backend whose launches run on buffers of their own records a whole step of them
  // (core/recorded_step.h) and resubmits it; the host backends and the reference have no recorded
  // form (theirs is the launch list itself, or none), and say so by default.
  virtual Support step_recording_support() { return Support::no(name() + " has no recorded form of a step"); }
  // `r`'s launches were prepared by this backend and ran once (the capture step); an Error when the
  // backend cannot record them.
  virtual std::unique_ptr<RecordedStep> record_step(const StepRecording& r);
};

// The dtype gate every device backend starts from: each tensor's dtype must be one the backend's
// kernels handle (`handled`), else a "no" naming the tensor and its dtype.
Support dtypes_handled(const Problem& pr, std::initializer_list<DType> handled, std::string_view backend);

template <class B>
concept BackendType = requires {
  { B::kName } -> std::convertible_to<const char*>;
  { B::create() } -> std::same_as<std::unique_ptr<Backend>>;
};

// The runtime registry: name -> backend, in registration order. Built-in backends are registered by
// the library; an out-of-tree one calls register_backend() once (e.g. from a static initializer).
using BackendFactory = std::function<std::unique_ptr<Backend>()>;
void register_backend(const std::string& name, BackendFactory factory);
template <BackendType B> void register_backend() { register_backend(B::kName, &B::create); }
std::vector<std::string> backend_names();
// One instance per name per process (device setup and program caches are paid once).
Backend& backend(const std::string& name);  // Error for an unknown name
Backend* find_backend(const std::string& name);

// Runs a validated problem that `b` supports: prepare, execute, finish, guard check. Throws Error on
// a guard-zone overwrite (or whatever the backend throws).
void execute_case(Backend& b, const Problem& pr, TensorMap& io);
// The same after asking supports() (an Error with the reason when not).
void run_case(Backend& b, const Problem& pr, TensorMap& io);
// For tensors that no case file or generator has validated yet: validates, then run_case.
void run_case(Backend& b, const Op& op, const Params& p, TensorMap& io);

}  // namespace ts
