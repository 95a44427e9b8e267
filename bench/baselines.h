#pragma once
// The machine's own limits, measured in the same run as the ops so every figure has a yardstick:
// memory bandwidth (STREAM triad, and a read-only stream), FMA peak, each device backend's own roofs
// (bench/device_roofs.cpp), and vendor SGEMM on the CPU (OpenBLAS) and OpenCL
// (CLBlast). Each registers under baseline/.
#include <string>
#include <vector>

#include "bench/options.h"

namespace ts::bench {

void register_stream_triad();
void register_stream_read();
// baseline/paged_read/<pool>: the read-only stream over a paged decode benchmark's pools, in pieces
// at the places a block table gives them, timed from cold caches as the ops are: --cold-iterations
// iterations each (a flush of milliseconds comes before each read of half a millisecond). Returns
// the names it capped so (op_benches.h).
std::vector<std::string> register_paged_read(const Options& o);
void register_fma_peak();
// baseline/device_{read,copy,fma_f32,fma_f16}/<backend> for each backend with a device of its own kind.
void register_device_roofs();
void register_cblas_sgemm();    // cblas_sgemm.cpp, built when OpenBLAS is found
void register_clblast_sgemm();  // clblast_sgemm.cpp, built when OpenCL and CLBlast are found

// All of the above that this build has; the names of those given a fixed iteration count.
std::vector<std::string> register_baselines(const Options& o);

}  // namespace ts::bench
