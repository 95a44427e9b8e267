// The "example" backend: rms_norm as a plain loop on the host, in every activation dtype the op's
// cases use (the tensors' own get / set convert; accumulation in float, as a naive kernel would).
// It registers itself when the program starts, so linking it into touchstone's conformance and
// benchmark mains (touchstone_add_backend) is all it takes to appear beside the built-in backends.
#include <cmath>

#include "core/backend.h"
#include "core/host_backend.h"

namespace {

void rms_norm(const ts::RmsNormParams& p, ts::TensorMap& t) {
  const ts::Tensor& x = t.at("x");
  const ts::Tensor& w = t.at("w");
  ts::Tensor& out = t.at("out");
  for (int64_t row = 0; row < p.tokens; ++row) {
    const int64_t base = row * p.dim;
    float sum_sq = 0.0f;
    for (int64_t c = 0; c < p.dim; ++c) {
      const float v = static_cast<float>(x.get(base + c));
      sum_sq += v * v;
    }
    const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(p.dim) + p.eps);
    for (int64_t c = 0; c < p.dim; ++c)
      out.set(base + c, static_cast<float>(x.get(base + c)) * inv * static_cast<float>(w.get(c)));
  }
}

struct ExampleBackend {
  static constexpr const char* kName = "example";
  static std::unique_ptr<ts::Backend> create() {
    ts::KernelTable kernels;
    kernels.add(ts::ops::rms_norm, rms_norm);
    return std::make_unique<ts::HostBackend>(kName, std::move(kernels));
  }
};

// Before main(): the registry only takes new backends until it is first used.
[[maybe_unused]] const bool registered = (ts::register_backend<ExampleBackend>(), true);

}  // namespace
