#pragma once
// The collective family's benchmarks, registered when the process runs under an MPI launcher:
//   collective/<backend>/<op>_w<W>_<bytes>   every backend's collective, each rank's buffer <bytes>
//   baseline/mpi_allreduce_w<W>_<bytes>      the same MPI's MPI_Allreduce on host buffers of that size
//   baseline/host_memcpy_w<W>_<bytes>        every rank copying such a buffer at once: the memory limit
// with counters algbw and busbw (bytes/s) as nccl-tests define them.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/options.h"

namespace ts::bench {

// `rounds` times over, round by round, so that a comparison's contenders alternate in time (each name
// then has `rounds` runs: take their median).
// Returns the listed names (".../manual_time") of them all: each has a fixed iteration count.
// `full`: the whole size sweep (Options::collective_full), else the short one.
std::vector<std::string> register_collective_benchmarks(int rounds, bool full);
// The buffer sizes per rank, in bytes, of either sweep.
std::vector<int64_t> collective_sizes(bool full);

}  // namespace ts::bench
