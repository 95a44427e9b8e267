// touchstone-opencl-perf: times one op of the OpenCL backend on its device timer, for tuning kernels
// without the full benchmark registry.
//   touchstone-opencl-perf OP PRESET [DTYPE=F32] [REPS=5]   (PRESET: a bench or case preset name)
// or with explicit parameters: touchstone-opencl-perf OP key=value,key=value [DTYPE] [REPS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/backend.h"
#include "core/op.h"

int main(int argc, char** argv) {
  using namespace ts;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OP PRESET|k=v,k=v [DTYPE] [REPS]\n", argv[0]);
    return 2;
  }
  try {
    const Op& op = op_or_throw(argv[1]);
    const std::string which = argv[2];
    const DType dt = argc > 3 ? dtype_from_name(argv[3]).value_or(DType::F32) : DType::F32;
    const int reps = argc > 4 ? std::atoi(argv[4]) : 5;
    Params p;
    bool found = false;
    for (const auto* list : {&op.benches(), &op.cases()})
      for (const CaseSpec& c : *list)
        if (c.name == which) { p = c.params; found = true; }
    if (!found) {
      ParamMap m;
      for (size_t s = 0; s < which.size();) {
        size_t e = which.find(',', s);
        if (e == std::string::npos) e = which.size();
        const std::string kv = which.substr(s, e - s);
        const size_t eq = kv.find('=');
        check(eq != std::string::npos, "'{}' is neither a preset nor key=value", kv);
        m[kv.substr(0, eq)] = kv.substr(eq + 1);
        s = e + 1;
      }
      p = op.parse(m);
    }
    Backend& b = backend("opencl");
    check(b.availability().ok, "opencl unavailable: {}", b.availability().detail);
    TensorMap io = op.make_case(p, dt, 1);
    auto launch = b.prepare(op, p, io);
    launch->execute();  // warm-up (first-run costs)
    double best = 1e30, sum = 0;
    for (int i = 0; i < reps; ++i) {
      launch->execute();
      best = std::min(best, launch->last_seconds());
      sum += launch->last_seconds();
    }
    const Cost c = op.cost(p, dt);
    std::printf("%s %s %s: best %.3f ms (mean %.3f)  %.2f GFLOP/s  %.2f GB/s\n", argv[1], which.c_str(),
                std::string(dtype_name(dt)).c_str(), best * 1e3, sum / reps * 1e3, c.flops / best * 1e-9,
                c.bytes / best * 1e-9);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
