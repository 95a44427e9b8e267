// A build without MPI (no MPI found at configure time): every process is a world of one rank. A
// process a launcher started anyway is refused, since it would run W independent copies.
#include <cstdio>
#include <cstdlib>

#include "mpi/world_scope.h"

namespace ts {

WorldScope::WorldScope(int&, char**&) {
  if (launched_by_mpi()) {
    std::fputs("touchstone: started by an MPI launcher, but this build has no MPI (install libopenmpi-dev and "
               "reconfigure)\n", stderr);
    std::exit(1);
  }
}
WorldScope::~WorldScope() = default;

bool built_with_mpi() { return false; }
std::string mpi_build_detail() { return "this build has no MPI (CMake found none: install libopenmpi-dev)"; }

}  // namespace ts

namespace ts {
RawAllreduce mpi_allreduce_baseline() { return nullptr; }
}  // namespace ts
