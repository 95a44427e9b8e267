#pragma once
// A baseline record: touchstone-bench's Google Benchmark JSON, unchanged (compare.py still reads it),
// plus one key "touchstone": {format, commit, dirty, build_type, limits, devices}, the machine's limits
// being the medians of the baselines' repetitions in the same run.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts::cli {

// The baselines every record measures alongside its op benchmarks (as ci/bench-summary.py adds them).
inline constexpr const char* kTriad = "baseline/stream_triad";
inline constexpr const char* kRead = "baseline/stream_read";  // the roof of read-dominated benchmarks
inline constexpr const char* kFmaPeak = "baseline/fma_peak";
inline constexpr const char* kSgemmPrefix = "baseline/cblas_sgemm/";
inline constexpr const char* kSgemmReference = "m512_n4096_k4096";  // the compute roof of compare
inline constexpr const char* kBaselineFilter =
    "^baseline/(stream_triad|stream_read|fma_peak|cblas_sgemm/m512_n4096_k4096)";

// A device backend's own roofs (baseline/device_<roof>/<backend>, bench/device_roofs.cpp), in bytes/s
// and flop/s; 0 where the run did not measure one.
inline constexpr const char* kDeviceRoofPrefix = "baseline/device_";
struct DeviceRoofs {
  double read = 0, copy = 0, fma_f32 = 0, fma_f16 = 0;
};

struct Limits {
  double triad_bytes_per_second = 0;
  double read_bytes_per_second = 0;  // the read-only stream; 0 in records made before it was measured
  double fma_peak_flops = 0;
  std::map<std::string, double> sgemm_flops;  // by gemm preset
  std::map<std::string, DeviceRoofs> devices;  // by backend, where the run measured them
};

// The benchmark regex of the device roofs of `backends` (empty for none).
std::string device_roof_filter(const std::vector<std::string>& backends);

// Every repetition of one benchmark (Google Benchmark's "iteration" runs; aggregates are ignored).
struct Repetitions {
  std::vector<double> bytes_per_second, flops, seconds;
  // Bytes written over bytes read (touchstone-bench's write_share counter, core/op.h); -1 where the
  // record has none (a baseline, or a record made before the counter).
  double write_share = -1;
  std::string error;  // error_message when the benchmark was skipped or failed
};

struct RecordMeta {
  std::string commit;
  bool dirty = false;
  std::string build_type;
  int processes = 1;  // touchstone-bench processes the repetitions were spread over (older records: 1)
};

struct Record {
  nlohmann::json json;
  RecordMeta meta;
  Limits limits;
  std::map<std::string, Repetitions> runs;  // by name without "/manual_time"
};

// Parses Google Benchmark's JSON output. Its reporter writes NaN and Infinity as bare words (the cv of a
// counter that is zero in every repetition), which JSON has not: those values become null. Discarded
// (is_discarded()) when the text is not JSON even so.
nlohmann::json parse_bench_json(std::string text);

// Groups a Google Benchmark JSON's iteration runs by benchmark; `what` names the input in errors.
std::map<std::string, Repetitions> repetitions_of(const nlohmann::json& bench, const std::string& what);

// Limits from the baselines' repetitions (their medians). Error when triad, FMA peak or the reference
// SGEMM is missing or failed: a record without them cannot normalise anything. The device roofs are
// taken where the run has them and succeeded.
Limits measure_limits(const std::map<std::string, Repetitions>& runs, const std::string& what);

// The JSONs of several touchstone-bench processes as one run: the first's context, every process's
// iteration runs in order with repetition_index and repetitions renumbered per benchmark (so the result
// reads as one run of all the repetitions; Google Benchmark's compare.py reads it so too), the
// per-process aggregates dropped (they summarised a part). One process: its JSON unchanged.
nlohmann::json merge_processes(std::vector<nlohmann::json> runs);

// touchstone-bench's JSON with the "touchstone" key added.
nlohmann::json make_record(nlohmann::json bench, const RecordMeta& meta);

// Reads and checks a record file: one-line Error for a file that is missing, not JSON, not a Google
// Benchmark JSON, without the "touchstone" key or without limits.
Record load_record(const std::string& path);
Record parse_record(nlohmann::json j, const std::string& what);

}  // namespace ts::cli
