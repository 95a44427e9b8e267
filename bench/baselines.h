#pragma once
// The machine's own limits, measured in the same run as the ops so every figure has a yardstick:
// memory bandwidth (STREAM triad, and a read-only stream), FMA peak, each device backend's own roofs
// (bench/device_roofs.cpp), and vendor SGEMM on the CPU (OpenBLAS) and OpenCL
// (CLBlast). Each registers under baseline/.
namespace ts::bench {

void register_stream_triad();
void register_stream_read();
void register_fma_peak();
// baseline/device_{read,copy,fma_f32,fma_f16}/<backend> for each backend with a device of its own kind.
void register_device_roofs();
void register_cblas_sgemm();    // cblas_sgemm.cpp, built when OpenBLAS is found
void register_clblast_sgemm();  // clblast_sgemm.cpp, built when OpenCL and CLBlast are found

// All of the above that this build has.
void register_baselines();

}  // namespace ts::bench
