// touchstone-conformance: the conformance matrix. Exit code 77 (CTest's "skipped") when the selected
// backend is unavailable on this machine, unless --require-available.
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

#include "conformance/golden_dir.h"
#include "conformance/options.h"
#include "core/backend.h"
#include "core/comm.h"
#include "mpi/world_scope.h"

namespace {

bool take(const std::string& arg, const char* flag, std::string& out) {
  const std::string f = std::string("--") + flag + "=";
  if (arg.rfind(f, 0) != 0) return false;
  out = arg.substr(f.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpiexec every rank runs the matrix (a collective case on its own rank, every rank's outputs
  // gathered, so every rank reaches the same verdict); rank 0 alone prints.
  ts::WorldScope world_scope(argc, argv);
  if (ts::world().rank() != 0 && !std::freopen("/dev/null", "w", stdout)) return 1;
  ::testing::InitGoogleTest(&argc, argv);
  ts::Options o;
  o.argv0 = argv[0];
  o.golden_dir = ts::default_golden_dir();
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      std::string v;
      if (take(a, "backend", o.backend) || take(a, "op", o.op) || take(a, "family", o.family) ||
          take(a, "failures", o.failures_dir) || take(a, "golden-dir", o.golden_dir)) {
      } else if (take(a, "tier", v)) {
        o.tier = ts::tier_or_throw(v);
      } else if (take(a, "seed", v)) {
        o.seed = std::stoull(v);
      } else if (take(a, "world", v)) {
        o.world = std::stoi(v);
      } else if (a == "--no-goldens") {
        o.golden_dir.clear();
      } else if (a == "--require-available") {
        o.require_available = true;
      } else {
        ts::fail("unknown flag '{}'", a);
      }
    }
    // CI names the backends it must have (TOUCHSTONE_REQUIRE_BACKENDS=opencl,vulkan): a missing one fails.
    if (const char* req = std::getenv("TOUCHSTONE_REQUIRE_BACKENDS"); req && !o.backend.empty()) {
      const std::string list = std::string(",") + req + ",";
      if (list.find("," + o.backend + ",") != std::string::npos) o.require_available = true;
    }
    // --world=W: the collective slice under `mpiexec -n W` (CTest's collective tests). A build without
    // MPI skips it with the reason (77), unless TOUCHSTONE_REQUIRE_BACKENDS names mpi.
    if (o.world) {
      const char* req = std::getenv("TOUCHSTONE_REQUIRE_BACKENDS");
      const bool required = req && (std::string(",") + req + ",").find(",mpi,") != std::string::npos;
      if (!ts::built_with_mpi()) {
        std::cout << "collective over " << o.world << " ranks: " << ts::mpi_build_detail() << "\n";
        return required ? 1 : 77;
      }
      ts::check(ts::world().size() == o.world, "--world={} but this process is one of {} ranks (run it under mpiexec -n {})",
                o.world, ts::world().size(), o.world);
      std::cout << "world: " << ts::world().describe() << "\n";
    }
    if (!o.op.empty()) ts::op_or_throw(o.op);
    if (!o.backend.empty()) {
      auto& b = ts::backend(o.backend);
      const auto a = b.availability();
      if (!a.ok) {
        std::cout << "backend " << o.backend << " unavailable: " << a.detail << "\n";
        return o.require_available ? 1 : 77;
      }
      std::cout << "backend " << o.backend << ": " << a.detail << "\n";
    }
    if (ts::register_matrix(o) == 0) ts::fail("no test matches these flags");
  } catch (const std::exception& e) {
    std::cerr << "touchstone-conformance: " << e.what() << "\n";
    return 1;
  }
  return RUN_ALL_TESTS();
}
