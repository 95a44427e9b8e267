#include <cstdlib>

#include "mpi/world_scope.h"

namespace ts {

// The variables a launcher sets in each process it starts: Open MPI's, MPICH's Hydra (PMI) and PMIx's.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace ts
