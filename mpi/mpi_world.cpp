// The MPI world: core/comm.h's Communicator over MPI_COMM_WORLD (a duplicate of it, so touchstone's
// messages never meet another library's). Blocking MPI collectives carry the data, so the cpu's
// all_reduce is exactly MPI_Allreduce; a watchdog thread bounds every collective in time, so a rank that
// died or stalled ends the others with one line instead of a hang.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/error.h"
#include "mpi/world_scope.h"

namespace ts {

namespace {

// ---- one line to stderr (then out of the process), from any thread or a signal handler ----

void write_line(const char* line) {
  const size_t n = std::strlen(line);
  for (size_t done = 0; done < n;) {
    const ssize_t w = ::write(2, line + done, n - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
}

// A rank ends with one line at most. Its watchdog, its stop-signal handler and a failed MPI call can
// each end it, and two can meet: on a loaded machine a thread that wrote its line may wait for a core
// before its _Exit while the launcher, told by another rank's exit, already signals this one, whose
// handler would write a second line. The first to take this flag writes; the others only exit. An atomic
// exchange on a lock-free bool is safe in a signal handler.
std::atomic<bool> g_line_written{false};
static_assert(std::atomic<bool>::is_always_lock_free);
bool take_the_line() { return !g_line_written.exchange(true); }

[[noreturn]] void die_with(const std::string& line) {
  if (take_the_line()) write_line(line.c_str());
  std::_Exit(1);
}

// What the rank is inside of, read by the watchdog thread and by the SIGTERM handler the launcher
// triggers when another rank fails. Arming costs a few atomic stores and no system call (an 8-byte
// all_reduce takes a microsecond): the watchdog polls, and the lines are only formatted when printed.
struct Current {
  std::atomic<const char*> what{nullptr};  // "all_reduce", ...; null when outside any collective
  std::atomic<int64_t> n{0};
  std::atomic<const char*> dtype{""};
  std::atomic<int64_t> since_ns{0};
};
Current g_current;
int g_rank = 0;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One line built from async-signal-safe pieces (strings, non-negative decimals) and written with one
// write(), so that the lines of ranks failing at once do not interleave.
class Line {
 public:
  Line& operator<<(const char* s) {
    while (*s && n_ + 1 < sizeof buf_) buf_[n_++] = *s++;
    return *this;
  }
  Line& operator<<(int64_t v) {
    char d[24];
    int i = 0;
    do d[i++] = static_cast<char>('0' + v % 10), v /= 10;
    while (v > 0 && i < 24);
    while (i > 0 && n_ + 1 < sizeof buf_) buf_[n_++] = d[--i];
    return *this;
  }
  // "all_reduce of 1021 F32 elements" (or the exchange's own words).
  Line& current(const char* what) {
    *this << what;
    if (const char* dt = g_current.dtype.load(); *dt) *this << " of " << g_current.n.load() << " " << dt << " elements";
    return *this;
  }
  void write() {
    buf_[n_] = '\0';
    write_line(buf_);
  }

 private:
  char buf_[512];
  size_t n_ = 0;
};

// Set once main() is done and the rank finalizes: a launcher that stops it now (another rank exited
// non-zero first, as every rank does after an error they all agreed on) stops a rank whose line, if
// any, is already printed.
std::atomic<bool> g_finishing{false};

extern "C" void on_sigterm(int) {
  if (g_finishing.load()) std::_Exit(1);
  if (!take_the_line()) std::_Exit(143);  // this rank's line is out (or being written): exit quietly
  Line l;
  l << "touchstone: rank " << int64_t{g_rank} << ": stopped by the launcher";
  if (const char* what = g_current.what.load()) l << " during ", l.current(what);
  l << " (another rank failed)\n";
  l.write();
  std::_Exit(143);
}

// ---- the watchdog ----

class Watchdog {
 public:
  explicit Watchdog(double seconds) : seconds_(seconds), thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  // Polls at a tenth of the timeout (at most every 100 ms): a collective past its deadline is found
  // within 10% of it.
  void loop() {
    const auto period = std::chrono::duration<double>(std::min(0.1, seconds_ / 10));
    std::unique_lock<std::mutex> l(m_);
    while (!cv_.wait_for(l, period, [this] { return stop_; })) {
      const char* what = g_current.what.load();
      const int64_t since = g_current.since_ns.load();
      if (what && since && (now_ns() - since) * 1e-9 >= seconds_) {
        if (!take_the_line()) std::_Exit(1);  // the stop signal's handler wrote this rank's line
        const std::string timeout = fmt::format("{:g}", seconds_);
        Line line;
        line << "touchstone: rank " << int64_t{g_rank} << ": ";
        line.current(what) << " did not complete within " << timeout.c_str()
                           << " s (TOUCHSTONE_MPI_TIMEOUT): another rank died or stalled\n";
        line.write();
        std::_Exit(1);
      }
    }
  }

  const double seconds_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is built
};

// Marks the rank as inside a collective for its lifetime.
class Armed {
 public:
  Armed(const char* what, int64_t n = 0, const char* dtype = "") {
    g_current.n.store(n);
    g_current.dtype.store(dtype);
    g_current.since_ns.store(now_ns());
    g_current.what.store(what);
  }
  ~Armed() {
    g_current.what.store(nullptr);
    g_current.since_ns.store(0);
  }
};

// ---- reductions MPI does not have: IEEE 754-2019 maximum and minimum (NaN propagates, +0 > -0) ----

float maximum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float minimum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
extern "C" void max_f32(void* in, void* inout, int* len, MPI_Datatype*) {
  const float* a = static_cast<const float*>(in);
  float* b = static_cast<float*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = maximum(a[i], b[i]);
}
extern "C" void min_f32(void* in, void* inout, int* len, MPI_Datatype*) {
  const float* a = static_cast<const float*>(in);
  float* b = static_cast<float*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = minimum(a[i], b[i]);
}

// ---- fault injection, for the tests of the fault paths ----
// TOUCHSTONE_MPI_FAULT=die@R: rank R kills itself (SIGKILL) as it enters its first data collective;
// stall@R: it stops there for good. The other ranks are then inside that collective.
struct Fault {
  enum Kind { None, Die, Stall } kind = None;
  int rank = -1;
};
Fault parse_fault(const char* s) {
  Fault f;
  if (!s || !*s) return f;
  const std::string v = s;
  const size_t at = v.find('@');
  const std::string kind = v.substr(0, at);
  char* end = nullptr;
  const long r = at == std::string::npos ? -1 : std::strtol(v.c_str() + at + 1, &end, 10);
  if ((kind != "die" && kind != "stall") || r < 0 || !end || *end)
    die_with(fmt::format("touchstone: TOUCHSTONE_MPI_FAULT='{}' is not die@RANK or stall@RANK\n", v));
  f.kind = kind == "die" ? Fault::Die : Fault::Stall;
  f.rank = static_cast<int>(r);
  return f;
}

double timeout_seconds() {
  const char* s = std::getenv("TOUCHSTONE_MPI_TIMEOUT");
  if (!s || !*s) return 300;  // a 256 MiB all_reduce over 8 oversubscribed ranks takes seconds, not minutes
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (!(v > 0) || !std::isfinite(v) || *end)
    die_with(fmt::format("touchstone: TOUCHSTONE_MPI_TIMEOUT='{}' is not a positive number of seconds\n", s));
  return v;
}

class MpiWorld final : public Communicator {
 public:
  MpiWorld() : fault_(parse_fault(std::getenv("TOUCHSTONE_MPI_FAULT"))) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    // Errors come back as codes (checked below, one line each) rather than MPI's own abort.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Op_create(&max_f32, 1, &max_);
    MPI_Op_create(&min_f32, 1, &min_);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(version, &n);
    library_ = std::string(version, static_cast<size_t>(n));
    library_ = library_.substr(0, library_.find_first_of(",\n"));
    g_rank = rank_;
    watchdog_ = std::make_unique<Watchdog>(timeout_seconds());
  }
  ~MpiWorld() override {
    watchdog_.reset();
    MPI_Op_free(&max_);
    MPI_Op_free(&min_);
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string describe() const override { return fmt::format("{}, {} ranks", library_, size_); }

  void all_reduce(const void* send, void* recv, int64_t n, DType dt, ReduceOp op) override {
    check(dt == DType::F32, "all_reduce over MPI takes F32 (F16 and BF16 are widened first), not {}", dtype_name(dt));
    const Armed a("all_reduce", n, dtype_cstr(dt));
    enter_collective();
    const MPI_Op mop = op == ReduceOp::Sum ? MPI_SUM : op == ReduceOp::Max ? max_ : min_;
    ok(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, count(n), MPI_FLOAT, mop, comm_), "MPI_Allreduce");
  }
  void all_gather(const void* send, void* recv, int64_t n, DType dt) override {
    const Armed a("all_gather", n, dtype_cstr(dt));
    enter_collective();
    const auto [c, type] = typed(n, dt);
    ok(MPI_Allgather(send, c, type, recv, c, type, comm_), "MPI_Allgather");
  }
  void broadcast(void* buf, int64_t n, DType dt, int src) override {
    check(src >= 0 && src < size_, "broadcast from rank {} in a world of {} ranks", src, size_);
    const Armed a("broadcast", n, dtype_cstr(dt));
    enter_collective();
    const auto [c, type] = typed(n, dt);
    ok(MPI_Bcast(buf, c, type, src, comm_), "MPI_Bcast");
  }
  std::vector<std::string> all_gather_text(const std::string& mine) override {
    const Armed a("an exchange of the ranks' checks");
    int len = count(static_cast<int64_t>(mine.size()));
    std::vector<int> lens(static_cast<size_t>(size_)), at(static_cast<size_t>(size_));
    ok(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    int64_t total = 0;
    for (int r = 0; r < size_; ++r) at[r] = count(total), total += lens[r];
    std::string all(static_cast<size_t>(total), '\0');
    ok(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, comm_),
       "MPI_Allgatherv");
    std::vector<std::string> v;
    for (int r = 0; r < size_; ++r) v.push_back(all.substr(static_cast<size_t>(at[r]), static_cast<size_t>(lens[r])));
    return v;
  }
  void barrier() override {
    const Armed a("a barrier");
    ok(MPI_Barrier(comm_), "MPI_Barrier");
  }

 private:
  // The dtype's name as a string with static storage, for the lines a handler writes.
  static const char* dtype_cstr(DType dt) {
    switch (dt) {
      case DType::F32: return "F32";
      case DType::F16: return "F16";
      case DType::BF16: return "BF16";
      case DType::U8: return "byte";
      default: return "other";
    }
  }
  // MPI counts are int: a larger one is refused with the reason, never truncated.
  static int count(int64_t n) {
    check(n >= 0 && n <= INT_MAX, "{} elements in one MPI call: MPI counts stop at 2^31 - 1", n);
    return static_cast<int>(n);
  }
  // 16-bit elements move as MPI_UINT16_T, the rest as bytes.
  static std::pair<int, MPI_Datatype> typed(int64_t n, DType dt) {
    switch (dtype_size(dt)) {
      case 4: return {count(n), MPI_FLOAT};
      case 2: return {count(n), MPI_UINT16_T};
      default: return {count(n * static_cast<int64_t>(dtype_size(dt))), MPI_BYTE};
    }
  }
  void ok(int rc, const char* call) const {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, msg, &n);
    // Mid-collective the world cannot go on: every rank ends, this one with its line.
    die_with(fmt::format("touchstone: rank {}: {} failed: {}\n", rank_, call, std::string(msg, static_cast<size_t>(n))));
  }
  void enter_collective() {
    if (fault_.rank != rank_) return;
    if (fault_.kind == Fault::Die) std::raise(SIGKILL);
    if (fault_.kind == Fault::Stall)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op max_ = MPI_OP_NULL, min_ = MPI_OP_NULL;
  int rank_ = 0, size_ = 1;
  std::string library_;
  Fault fault_;
  std::unique_ptr<Watchdog> watchdog_;
};

bool g_started = false;

}  // namespace

WorldScope::WorldScope(int& argc, char**& argv) {
  const char* off = std::getenv("TOUCHSTONE_MPI");
  if (!launched_by_mpi() || (off && std::string(off) == "0")) return;
  int provided = 0;
  // The watchdog thread never calls MPI: the main thread is the only one that does.
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    die_with("touchstone: MPI_Init_thread failed\n");
  g_started = true;
  set_world(std::make_unique<MpiWorld>());
  std::signal(SIGTERM, on_sigterm);
}

WorldScope::~WorldScope() {
  if (!g_started) return;
  std::cout.flush();  // what rank 0 printed is out before any stop signal can end the process
  std::fflush(nullptr);
  g_finishing.store(true);
  // No rank leaves (and, exiting non-zero, has the launcher stop the others) before every rank is
  // done printing. Under the watchdog: a rank that never gets here ends the others with a line.
  world().barrier();
  set_world(single_rank_world());
  MPI_Finalize();
  g_started = false;
}

namespace {
void raw_allreduce(const float* send, float* recv, int64_t n) {
  if (n > INT_MAX) die_with("touchstone: the MPI_Allreduce baseline takes at most 2^31 - 1 elements\n");
  if (MPI_Allreduce(send, recv, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
    die_with("touchstone: the MPI_Allreduce baseline failed\n");
}
}  // namespace

RawAllreduce mpi_allreduce_baseline() { return g_started ? &raw_allreduce : nullptr; }

bool built_with_mpi() { return true; }
std::string mpi_build_detail() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  MPI_Get_library_version(version, &n);
  std::string s(version, static_cast<size_t>(n));
  return s.substr(0, s.find_first_of(",\n"));
}

}  // namespace ts
