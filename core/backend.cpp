#include "core/backend.h"

#include "core/host_backend.h"

namespace ts {

void run_case(Backend& b, const Op& op, const Params& p, TensorMap& io) {
  op.validate(p, io);
  const DType dt = case_dtype(op, p, io);
  const Support s = b.supports(op, dt);
  check(s.ok, "{} does not support {} ({}): {}", b.name(), op.name(), dtype_name(dt), s.reason);
  auto launch = b.prepare(op, p, io);
  launch->execute();
  launch->finish();
  for (const auto& name : op.output_names(p))
    check(io.at(name).guards_intact(), "{} {}: write outside tensor '{}' (guard zone overwritten)", b.name(),
          op.name(), name);
}

// ---- host backends ----

const HostKernel* KernelTable::find(const std::string& op) const {
  auto it = table_.find(op);
  return it == table_.end() ? nullptr : &it->second;
}
const std::string* KernelTable::missing_reason(const std::string& op) const {
  auto it = missing_.find(op);
  return it == missing_.end() ? nullptr : &it->second;
}

Availability HostBackend::availability() { return {true, "host CPU"}; }

Support HostBackend::supports(const Op& op, DType) {
  if (kernels_.find(op.name())) return Support::yes();
  if (auto* why = kernels_.missing_reason(op.name())) return Support::no(*why);
  return Support::no("no kernel for this op yet");
}

namespace {
class HostLaunch final : public Launch {
 public:
  HostLaunch(const HostKernel& k, Params p, TensorMap& io) : k_(k), p_(std::move(p)), io_(io) {}
  void execute() override {
    const auto t0 = std::chrono::steady_clock::now();
    k_(p_, io_);
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double last_seconds() const override { return seconds_; }
  void finish() override {}  // the kernel wrote the host tensors directly

 private:
  const HostKernel& k_;
  Params p_;
  TensorMap& io_;
  double seconds_ = 0;
};
}  // namespace

std::unique_ptr<Launch> HostBackend::prepare(const Op& op, const Params& p, TensorMap& io) {
  const HostKernel* k = kernels_.find(op.name());
  check(k != nullptr, "{}: no kernel for {}", name_, op.name());
  return std::make_unique<HostLaunch>(*k, p, io);
}

}  // namespace ts
