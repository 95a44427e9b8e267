#include "core/collective.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace ts {

bool is_collective(const Op& op) { return op.family() == "collective"; }

std::string CollectiveCall::describe() const {
  std::string s = op;
  if (op == "all_reduce") s += fmt::format(" reduce={}", enum_name(reduce));
  if (op == "broadcast") s += fmt::format(" src_rank={}", src_rank);
  return s + fmt::format(" {} len={} world_size={}", dtype_name(dtype), len, world_size);
}

CollectiveCall call_of(const AllReduceParams& p, DType dt) {
  return {"all_reduce", dt, p.world_size, p.len, 0, p.reduce};
}
CollectiveCall call_of(const AllGatherParams& p, DType dt) { return {"all_gather", dt, p.world_size, p.len}; }
CollectiveCall call_of(const CollectiveBroadcastParams& p, DType dt) {
  return {"broadcast", dt, p.world_size, p.len, p.src_rank};
}

CollectiveCall collective_call(const Problem& pr) {
  const std::string& op = pr.op->name();
  if (op == "all_reduce") return call_of(pr.params.as<AllReduceParams>(), pr.dtype);
  if (op == "all_gather") return call_of(pr.params.as<AllGatherParams>(), pr.dtype);
  check(op == "broadcast", "{} is not a collective", op);
  return call_of(pr.params.as<CollectiveBroadcastParams>(), pr.dtype);
}

int64_t case_world_size(const Problem& pr) {
  if (pr.op->name() == "tp_gemm_pair") return pr.params.as<TensorParallelGemmParams>().world_size;
  return collective_call(pr).world_size;
}

std::string describe_case_call(const Problem& pr) {
  if (pr.op->name() != "tp_gemm_pair") return collective_call(pr).describe();
  std::string s = fmt::format("{} {}", pr.op->name(), dtype_name(pr.dtype));
  for (const auto& [k, v] : pr.op->to_map(pr.params)) s += fmt::format(" {}={}", k, v);
  return s;
}

Support device_collective_support(const Problem& pr, std::string_view backend) {
  const Support s = dtypes_handled(pr, {DType::F32, DType::F16, DType::BF16}, backend);
  return s.ok ? world_runs(pr) : s;
}

Support world_runs(const Problem& pr) {
  const int64_t cw = case_world_size(pr);
  const int w = world().size();
  if (cw == w) return Support::yes();
  return Support::no(fmt::format("the case is over {} ranks and this process is rank {} of {} (run it under "
                                 "mpiexec -n {})",
                                 cw, world().rank(), w, cw));
}

namespace {

// agree_on_call and agree_on_case: the world first, then every rank's description of its call.
void agree_on(int64_t world_size, const std::string& call) {
  Communicator& w = world();
  // Each rank's own check first, agreed, so that a rank whose case differs does not leave the others
  // waiting in the exchange below.
  agree_or_throw(world_size == w.size()
                     ? ""
                     : fmt::format("the case's world_size is {}, but {} {} running (mpiexec -n {} runs it)",
                                   world_size, w.size(), w.size() == 1 ? "rank is" : "ranks are", world_size));
  if (w.size() == 1) return;
  const std::vector<std::string> calls = w.all_gather_text(call);
  for (size_t r = 1; r < calls.size(); ++r)
    if (calls[r] != calls[0])
      throw RanksAgreedError(fmt::format("ranks disagree before any data moved: rank 0 runs {}, rank {} runs {}",
                                         calls[0], r, calls[r]));
}

}  // namespace

void agree_on_call(const CollectiveCall& c) { agree_on(c.world_size, c.describe()); }
void agree_on_case(const Problem& pr) { agree_on(case_world_size(pr), describe_case_call(pr)); }

namespace {

// F16 / BF16 <-> F32, exact one way and rounding to nearest even the other.
void widen(const void* src, float* dst, int64_t n, DType dt) {
  const auto* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = dt == DType::F16 ? f16_to_f32(h[i]) : bf16_to_f32(h[i]);
}
void narrow(const float* src, void* dst, int64_t n, DType dt) {
  auto* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = dt == DType::F16 ? f32_to_f16(src[i]) : f32_to_bf16(src[i]);
}

}  // namespace

void run_host_collective(const CollectiveCall& c, const void* x, void* out) {
  Communicator& w = world();
  if (c.op == "all_reduce") {
    if (c.dtype == DType::F32) return w.all_reduce(x, out, c.len, DType::F32, c.reduce);
    check(c.dtype == DType::F16 || c.dtype == DType::BF16, "all_reduce of {} elements", dtype_name(c.dtype));
    // Kept between calls: a benchmark's loop does not pay an allocation per call.
    thread_local std::vector<float> wide;
    wide.resize(static_cast<size_t>(c.len));
    widen(x, wide.data(), c.len, c.dtype);
    w.all_reduce(wide.data(), wide.data(), c.len, DType::F32, c.reduce);
    return narrow(wide.data(), out, c.len, c.dtype);
  }
  if (c.op == "all_gather") return w.all_gather(x, out, c.len, c.dtype);
  check(c.op == "broadcast", "{} is not a collective", c.op);
  // Every rank's out receives the source's x: the source copies its own in first.
  const size_t bytes = static_cast<size_t>(c.len) * dtype_size(c.dtype);
  if (w.rank() == c.src_rank && bytes) std::memcpy(out, x, bytes);
  w.broadcast(out, c.len, c.dtype, static_cast<int>(c.src_rank));
}

StagedCollectiveLaunch::StagedCollectiveLaunch(const Problem& pr, TensorMap& io)
    : io_(io),
      call_(collective_call(pr)),
      x_(rank_tensor("x", world().rank())),
      out_(rank_tensor("out", world().rank())),
      x_bytes_(io.at(x_).nbytes()),
      out_bytes_(io.at(out_).nbytes()) {}

void StagedCollectiveLaunch::agree() { agree_on_call(call_); }

void StagedCollectiveLaunch::execute() {
  using clock = std::chrono::steady_clock;
  if (maps()) {
    // An empty buffer is never mapped (a map of 0 bytes is an error in OpenCL); MPI takes no data there.
    const auto t0 = clock::now();
    void* x = x_bytes_ ? map_data(x_, x_bytes_, false) : nullptr;
    void* out = out_bytes_ ? map_data(out_, out_bytes_, true) : nullptr;
    maps_ready();
    const auto t1 = clock::now();
    run_host_collective(call_, x, out);
    const auto t2 = clock::now();
    if (out) unmap_data(out_, out);
    if (x) unmap_data(x_, x);
    unmaps_ready();
    const auto t3 = clock::now();
    seconds_ = std::chrono::duration<double>(t3 - t0).count();
    staging_ = std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count();
    return;
  }
  // The host buffers, made at the first staged call (a launch that maps never needs them).
  stage_x_.resize(x_bytes_);
  stage_out_.resize(out_bytes_);
  const auto t0 = clock::now();
  read_data(x_, stage_x_.data(), stage_x_.size());
  const auto t1 = clock::now();
  run_host_collective(call_, stage_x_.data(), stage_out_.data());
  const auto t2 = clock::now();
  write_data(out_, stage_out_.data(), stage_out_.size());
  const auto t3 = clock::now();
  seconds_ = std::chrono::duration<double>(t3 - t0).count();
  staging_ = std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count();
}

void StagedCollectiveLaunch::upload_inputs() {
  upload(x_);
  agree();  // a new step: the ranks agree again before data moves
}

void StagedCollectiveLaunch::finish() { download(out_); }

bool collective_staging_forced() {
  const char* v = std::getenv("TOUCHSTONE_COLLECTIVE_STAGING");
  if (!v || !*v || std::string_view(v) == "map") return false;
  check(std::string_view(v) == "copy", "TOUCHSTONE_COLLECTIVE_STAGING is '{}': map or copy", v);
  return true;
}

void gather_rank_outputs(const Problem& pr, TensorMap& io) {
  Communicator& w = world();
  if (!is_collective(*pr.op) || w.size() == 1) return;
  if (case_world_size(pr) != w.size()) return;  // the reference computed every rank's in one process
  const size_t bytes = io.at(rank_tensor("out", w.rank())).nbytes();  // every rank's out.q is this size
  if (bytes == 0) return;
  // One all_gather of the bytes: rank q's out.q lands in a buffer at q * bytes, then into out.q.
  std::vector<std::byte> all(bytes * static_cast<size_t>(w.size()));
  w.all_gather(io.at(rank_tensor("out", w.rank())).data(), all.data(), static_cast<int64_t>(bytes), DType::U8);
  for (int q = 0; q < w.size(); ++q) std::memcpy(io.at(rank_tensor("out", q)).data(), all.data() + q * bytes, bytes);
}

}  // namespace ts
