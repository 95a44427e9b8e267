#pragma once
// The op registry: one benchmark per backend x op x bench preset x selected dtype.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/options.h"
#include "bench/setup_cache.h"
#include "core/backend.h"
#include "core/op.h"

namespace ts::bench {

struct OpBench {
  std::string name;  // also the setup cache key
  std::string backend;
  const Op* op;
  const CaseSpec* preset;
  DType dtype;
  uint64_t seed;
  bool warm_cache;
};

// Declared in this order so the launch is destroyed before the tensors it is bound to.
struct OpSetup final : Setup {
  TensorMap io;
  std::unique_ptr<Launch> launch;
  double prepare_seconds = 0;  // a backend's one-time work (uploads, weight repacks), never in the timing
};

// Why a benchmark cannot run here (backend unavailable, problem unsupported): a skip, not a failure.
struct SetupSkip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The benchmark's setup (inputs, prepared launch, one warm-up execute), kept in the setup cache.
// SetupSkip, or any other exception for a failure.
OpSetup& set_up(const OpBench& ob);

// Registers <op>/<backend>/<preset>/<dtype> for every op in the catalog and every registered backend
// (the reference only with --include-reference). Backends are created only when a benchmark of
// theirs runs, so a filter that excludes a backend never initializes its device. Returns the listed
// names (".../manual_time") of those the iteration cap gave a fixed iteration count.
std::vector<std::string> register_op_benchmarks(const Options& o);

}  // namespace ts::bench
