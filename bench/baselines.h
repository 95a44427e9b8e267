#pragma once
// The machine's own limits, measured in the same run as the ops so every figure has a yardstick:
// memory bandwidth (STREAM triad, and a read-only stream), FMA peak, and vendor SGEMM on the CPU (OpenBLAS) and OpenCL
// (CLBlast). Each registers under baseline/.
namespace ts::bench {

void register_stream_triad();
void register_stream_read();
void register_fma_peak();
void register_cblas_sgemm();    // cblas_sgemm.cpp, built when OpenBLAS is found
void register_clblast_sgemm();  // clblast_sgemm.cpp, built when OpenCL and CLBlast are found

// All of the above that this build has.
void register_baselines();

}  // namespace ts::bench
