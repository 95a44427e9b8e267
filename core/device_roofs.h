#pragma once
// A device's own roofs, measured on it in the same run as the ops that are judged against them: a
// read-only stream (the roof of a decode GEMV, which reads its weights and writes a few outputs), a
// copy (read one stream, write another: the device's counterpart of the host's triad), and the FMA
// peak in F32 and, where the device computes in it, F16. A backend with a device of its own kind
// (Backend::prepare_roof) runs one kernel per roof over the tensors of a RoofCase; the case says what
// its outputs must hold afterwards, so a kernel that skipped words or rounds is caught, not timed.
// Registered by the benchmark as baseline/device_<roof>/<backend> (bench/device_roofs.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts {

enum class Roof { read, copy, fma_f32, fma_f16 };
inline constexpr Roof kRoofs[] = {Roof::read, Roof::copy, Roof::fma_f32, Roof::fma_f16};
// "device_read", "device_copy", "device_fma_f32", "device_fma_f16": the benchmark's name part.
const char* roof_name(Roof r);

// The tensors of one roof kernel and what they must hold after it ran.
//   read:    x [words] U32 (a pattern), part [lanes] U32: each lane's wrapping sum of the words it read
//            (lane l of window w at part[w * lanes + l]); all parts sum to x's sum (mod 2^32).
//   copy:    x [words] U32, y [words] U32: y == x.
//   fma_*:   out [lanes] F32: each lane's sum of kFmaChains chains of `rounds` steps
//            acc = fma(acc, mul, add) from acc = start(chain), in the roof's precision.
struct RoofCase {
  Roof roof = Roof::read;
  TensorMap io;
  std::vector<std::string> outputs;
  uint64_t words = 0;   // read, copy: 32-bit words streamed
  uint64_t lanes = 0;   // read: partial sums per window; fma: invocations
  uint32_t windows = 1; // read: windows the stream is bound in (a device's maxStorageBufferRange)
  uint32_t rounds = 0;  // fma: steps of every chain
  float mul = 0, add = 0;
  double bytes = 0, flops = 0;  // one run of the kernel moves / does
  uint32_t expect_sum = 0;      // read
  float expect_lane = 0, tolerance = 0;  // fma: every out[l] within tolerance of expect_lane
};

// Chains per lane of the FMA kernels: enough independent ones to hide an FMA's latency on a GPU (4
// cycles, several warps per scheduler) and a CPU driver's vector units alike. The kernels hold them
// as 8 four-wide vectors (F32) or 16 two-wide ones (F16).
inline constexpr int kFmaChains = 32;

// A stream of `bytes` (a multiple of 16) for read / copy, bound in `windows` windows of equal size
// with `lanes` partial sums each (read); `lanes` invocations of `rounds` steps for the FMA roofs.
RoofCase make_stream_roof(Roof r, uint64_t bytes, uint32_t windows, uint64_t lanes);
RoofCase make_fma_roof(Roof r, uint64_t lanes, uint32_t rounds);
// The chain start values (both precisions): chain c starts at start(c).
float fma_chain_start(int c);

// Empty when the outputs hold what they must; else one line saying what is wrong and where.
std::string check_roof(const RoofCase& c);

}  // namespace ts
