// Times the cpu backend on the shapes it is held to, next to the machine's own yardsticks: a STREAM
// triad (2 threads) for the memory-bound ops and cblas_sgemm for the large GEMM. One run prints all.
//   touchstone-cpu-perf [--reps N]
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <ctime>
#include <vector>

#include "core/backend.h"
#include "core/op.h"
#include "cpu/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Evicts the caches (the L3 of this EPYC holds a whole rms_norm case): memory-bound figures are then
// DRAM figures, comparable with the triad.
// Reads only, so the evicting lines are clean and cost the timed call no write-backs.
void flush_caches() {
  static std::vector<float> junk(64 << 20, 1.0f);
  static std::atomic<float> sink{0};  // keeps the reads alive
  ts::cpu::parallel_for(static_cast<int64_t>(junk.size()), 1 << 16, [&](int64_t lo, int64_t hi) {
    float s = 0;
    for (int64_t i = lo; i < hi; ++i) s += junk[i];
    sink.store(s, std::memory_order_relaxed);
  });
}

// Best-of-N wall time of f (the first call warms page tables), caches flushed before each timed call.
template <class F> double best_time(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    flush_caches();
    const auto t0 = Clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

// STREAM triad a = b + s*c over 3 x 64 MiB, split across the cpu backend's pool: bytes 3 per element.
double triad_gbs(int reps) {
  const int64_t n = 16 << 20;
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  const double t = best_time(reps, [&] {
    ts::cpu::parallel_for(n, 1 << 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
    });
  });
  return 3.0 * 4.0 * n / t / 1e9;
}

// CPU time of the whole process (all threads): on a shared machine, wall time alone misleads.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct Timed {
  double seconds = 0, cpu_seconds = 0;
  ts::Cost cost;
};

// Times one op of the catalog on the cpu backend; nullopt-style flag when the op is not described yet.
bool time_op(const std::string& name, const ts::ParamMap& params, int reps, Timed& out,
             ts::DType dt = ts::DType::F32) {
  const ts::Op* op = ts::find_op(name);
  if (!op) return false;
  const ts::Params p = op->parse(params);
  ts::TensorMap io = op->make_case(p, dt, 1);
  op->validate(p, io);
  auto launch = ts::backend("cpu").prepare(*op, p, io);
  double cpu = 0;
  out.seconds = best_time(reps, [&] {
    const double c0 = cpu_seconds();
    launch->execute();
    cpu += cpu_seconds() - c0;
  });
  out.cpu_seconds = cpu / (reps + 1);
  out.cost = op->cost(p, dt);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 10;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--reps") reps = std::max(1, std::atoi(argv[i + 1]));
  std::printf("threads: %d\n", ts::cpu::ThreadPool::instance().size());
  const double triad = triad_gbs(reps);
  std::printf("STREAM triad: %.1f GB/s\n", triad);

  Timed t;
  if (time_op("gemm", {{"m", "1"}, {"n", "4096"}, {"k", "4096"}}, reps, t)) {
    const double gbs = 4096.0 * 4096 * 4 / t.seconds / 1e9;
    std::printf("gemm m1 n4096 k4096 F32: %.3f ms, %.1f GB/s over the weight = %.0f%% of triad (goal 80%%); "
                "%.3f ms cpu per call\n", t.seconds * 1e3, gbs, 100 * gbs / triad, t.cpu_seconds * 1e3);
  }
  {
    const int m = 512, n = 4096, k = 4096;
    std::vector<float> a(size_t(m) * k, 0.5f), b(size_t(n) * k, 0.25f), c(size_t(m) * n);
    const double tb = best_time(reps, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.f, a.data(), k, b.data(), k, 0.f, c.data(), n);
    });
    const double blas = 2.0 * m * n * k / tb / 1e9;
    std::printf("cblas_sgemm m512 n4096 k4096: %.1f GFLOP/s\n", blas);
    if (time_op("gemm", {{"m", "512"}, {"n", "4096"}, {"k", "4096"}}, reps, t)) {
      const double g = t.cost.flops / t.seconds / 1e9;
      std::printf("gemm m512 n4096 k4096 F32: %.1f GFLOP/s = %.0f%% of cblas_sgemm (goal 90%%)\n", g, 100 * g / blas);
    }
  }
  // F16 / BF16 weights: widened panel by panel into sgemm (large m), read as 16-bit words (GEMV).
  for (const ts::DType dt : {ts::DType::F16, ts::DType::BF16}) {
    const char* name = ts::dtype_name(dt).data();
    if (time_op("gemm", {{"m", "512"}, {"n", "4096"}, {"k", "4096"}}, reps, t, dt))
      std::printf("gemm m512 n4096 k4096 %s: %.1f GFLOP/s\n", name, t.cost.flops / t.seconds / 1e9);
    if (time_op("gemm", {{"m", "1"}, {"n", "4096"}, {"k", "4096"}}, reps, t, dt))
      std::printf("gemm m1 n4096 k4096 %s: %.1f GB/s over the weight\n", name, 4096.0 * 4096 * 2 / t.seconds / 1e9);
  }
  if (time_op("rms_norm", {{"tokens", "512"}, {"dim", "4096"}, {"eps", "1e-6"}}, reps, t)) {
    const double gbs = t.cost.bytes / t.seconds / 1e9;
    std::printf("rms_norm t512 d4096 F32: %.3f ms, %.1f GB/s = %.0f%% of triad (goal 70%%)\n", t.seconds * 1e3,
                gbs, 100 * gbs / triad);
  }
  if (time_op("flash_attention",
              {{"batch", "1"}, {"q_len", "1"}, {"kv_len", "4096"}, {"pos_offset", "4095"}, {"num_heads", "32"},
               {"num_kv_heads", "8"}, {"head_dim", "128"}, {"causal", "true"}, {"scale", "0.08838834764"},
               {"kv_seq_stride", "0"}, {"sliding_window", "0"}},
              reps, t)) {
    const double kv_bytes = 2.0 * 8 * 4096 * 128 * 4;
    const double gbs = kv_bytes / t.seconds / 1e9;
    std::printf("flash_attention decode kv4096 32/8 heads hd128 F32: %.3f ms, %.1f GB/s over K+V = %.0f%% of "
                "triad (goal 50%%); %.3f ms cpu per call\n", t.seconds * 1e3, gbs, 100 * gbs / triad, t.cpu_seconds * 1e3);
  }
  return 0;
}
