#pragma once
// What the vendor SGEMM baselines share: their shapes are the gemm op's bench presets (one list: a
// new gemm preset gets its baselines), their inputs come from the gemm description's generator, and
// their output is spot-checked so a misconfigured call cannot post a fast wrong figure.
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/op.h"

namespace ts::bench {

struct SgemmShape {
  std::string preset;  // the gemm bench preset's name, e.g. m512_n4096_k4096
  Params params;
  int64_t m, n, k;
};
std::vector<SgemmShape> sgemm_shapes();

// F32 a [m,k] and b [n,k] from the gemm op's generator, out [m,n] allocated.
TensorMap sgemm_inputs(const SgemmShape& s, uint64_t seed);

// Checks sampled elements of out = a @ b^T against a double-precision dot product within the
// worst-case bound for any summation order, gamma_k * sum |a||b| (Higham, eq. 3.5). Returns the
// first mismatch, or "" when all agree.
std::string check_sgemm_sample(const float* a, const float* b, const float* out, int64_t m, int64_t n,
                               int64_t k);

// The counters every SGEMM baseline reports (the gemm op's cost model), and its label.
void report_sgemm(benchmark::State& state, const SgemmShape& s, const std::string& library);

}  // namespace ts::bench
