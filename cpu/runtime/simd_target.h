#pragma once
// Which of the compiled SIMD targets the cpu kernels dispatch to. By default the best this CPU
// runs; TOUCHSTONE_CPU_SIMD=AVX2 (or SCALAR, or any compiled target's name) caps it, so that the
// narrower kernels, which the best target would otherwise always hide, are tested on this machine too.
#include <string>

namespace ts::cpu {

// Applies TOUCHSTONE_CPU_SIMD once per process and returns the target the kernels now use, e.g.
// "AVX3". Throws ts::Error for a name that is not a compiled target or that this CPU cannot run.
std::string select_simd_target();

// Whether this CPU has AVX-512 (F, BW, VL, DQ) with VNNI, which Highway 1.0's AVX-512 target does not
// use: the kernels written in it (the int8 attention scores, the GGUF int8 dot's VNNI step) ask
// this, beside the target their caller runs.
bool cpu_avx512_vnni();

}  // namespace ts::cpu
