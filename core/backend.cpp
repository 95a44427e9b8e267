#include "core/backend.h"

#include "core/collective.h"
#include "core/host_backend.h"

#include <algorithm>

#include <fmt/format.h>

namespace ts {

void execute_case(Backend& b, const Problem& pr, TensorMap& io) {
  auto launch = b.prepare(pr, io);
  launch->execute();
  launch->finish();
  gather_rank_outputs(pr, io);  // a collective's other ranks' outputs (a no-op for every other op)
  for (const auto& name : pr.output_names())
    check(io.at(name).guards_intact(), "{} {}: write outside tensor '{}' (guard zone overwritten)", b.name(),
          pr.op->name(), name);
}

void run_case(Backend& b, const Problem& pr, TensorMap& io) {
  const Support s = b.supports(pr);
  check(s.ok, "{} does not support {} ({}{}{}): {}", b.name(), pr.op->name(), dtype_name(pr.dtype),
        pr.variant.empty() ? "" : ", ", pr.variant, s.reason);
  execute_case(b, pr, io);
}

void run_case(Backend& b, const Op& op, const Params& p, TensorMap& io) {
  op.check_params(p);
  const Problem pr = problem_of(op, p, io);
  op.validate(pr, io);
  run_case(b, pr, io);
}

Support dtypes_handled(const Problem& pr, std::initializer_list<DType> handled, std::string_view backend) {
  for (const auto& d : pr.decls)
    if (std::find(handled.begin(), handled.end(), d.dtype) == handled.end())
      return Support::no(fmt::format("tensor '{}' is {}; the {} kernels do not handle it", d.name,
                                     d.dtype_rule_str(), backend));
  return Support::yes();
}

std::unique_ptr<Backend::RoofRun> Backend::prepare_roof(Roof r) {
  throw Error(fmt::format("{}: {} is not measured here: {}", name(), roof_name(r), roof_support(r).reason));
}

std::unique_ptr<RecordedStep> Backend::record_step(const StepRecording& /*r*/) {
  throw Error(fmt::format("{}: cannot record a step: {}", name(), step_recording_support().reason));
}

// ---- host backends ----

const KernelTable::Entry* KernelTable::find(std::string_view op) const {
  auto it = table_.find(op);
  return it == table_.end() ? nullptr : &it->second;
}

Availability HostBackend::availability() { return {true, "host CPU"}; }

Support HostBackend::supports(const Problem& pr) {
  const KernelTable::Entry* e = kernels_.find(pr.op->name());
  if (!e) return Support::no("no kernel for this op yet");
  return e->supports ? e->supports(pr) : Support::yes();
}

std::optional<Tolerance> HostBackend::tolerance(const Problem& pr, const std::string& output, const TensorMap& inputs) {
  const KernelTable::Entry* e = kernels_.find(pr.op->name());
  return e && e->tolerance ? e->tolerance(pr, output, inputs) : std::nullopt;
}

namespace {
class HostLaunch final : public Launch {
 public:
  // `repack`: the kernel's prepare step (empty for a plain kernel), run again on upload_inputs().
  HostLaunch(HostRun run, std::function<HostRun()> repack = {}) : run_(std::move(run)), repack_(std::move(repack)) {}
  void execute() override {
    const auto t0 = std::chrono::steady_clock::now();
    run_();
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double last_seconds() const override { return seconds_; }
  void finish() override {}  // the kernel wrote the host tensors directly
  // The kernels read the host tensors themselves; only what a prepare step made from them (repacked
  // weights) is made again from their new values.
  void upload_inputs() override {
    if (repack_) run_ = repack_();
  }

 private:
  HostRun run_;
  std::function<HostRun()> repack_;
  double seconds_ = 0;
};
}  // namespace

std::unique_ptr<Launch> HostBackend::prepare(const Problem& pr, TensorMap& io) {
  const KernelTable::Entry* e = kernels_.find(pr.op->name());
  check(e != nullptr, "{}: no kernel for {}", name_, pr.op->name());
  if (e->prepare) {
    auto repack = [&f = e->prepare, p = pr.params, &io] { return f(p, io); };
    return std::make_unique<HostLaunch>(repack(), repack);
  }
  return std::make_unique<HostLaunch>([&k = e->run, p = pr.params, &io] { k(p, io); });
}

}  // namespace ts
