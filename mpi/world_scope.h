#pragma once
// main()'s start and end of this process's world (core/comm.h): MPI's when an MPI launcher started the
// process (mpiexec sets its rank in the environment) and this build has MPI, one rank otherwise. A
// process that nobody launched never initializes MPI, so every other use of touchstone pays nothing.
#include <cstdint>
#include <string>

namespace ts {

class WorldScope {
 public:
  WorldScope(int& argc, char**& argv);
  ~WorldScope();  // MPI_Finalize where MPI was started
  WorldScope(const WorldScope&) = delete;
  WorldScope& operator=(const WorldScope&) = delete;
};

// Whether this build has MPI, and why not when it has not (for skips: "built without MPI: ...").
bool built_with_mpi();
std::string mpi_build_detail();
// Whether a launcher started this process (its environment names a rank).
bool launched_by_mpi();

}  // namespace ts

namespace ts {

// The MPI library's own MPI_Allreduce (sum of F32 from send into recv, on MPI_COMM_WORLD), without
// touchstone's checks or watchdog: the collective benchmarks' baseline on the same buffers. Null where
// MPI is not running (a build without it, a process no launcher started).
using RawAllreduce = void (*)(const float* send, float* recv, int64_t n);
RawAllreduce mpi_allreduce_baseline();

}  // namespace ts
