#include "cli/bench_record.h"

#include <fstream>
#include <iterator>
#include <regex>

#include "cli/bench_stats.h"
#include "core/error.h"

namespace ts::cli {

using nlohmann::json;

namespace {

// The benchmark without Google Benchmark's suffixes: "/manual_time", and "/iterations:N" where
// touchstone-bench fixed the count (an older binary did not, and its records still compare).
std::string short_name(std::string name) {
  const std::string suffix = "/manual_time";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  const size_t it = name.rfind("/iterations:");
  if (it != std::string::npos && name.find('/', it + 1) == std::string::npos) name.resize(it);
  return name;
}

double time_unit_seconds(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  fail("unknown time_unit '{}'", unit);
}

double number_or_zero(const json& run, const char* key) {
  const auto it = run.find(key);
  return it != run.end() && it->is_number() ? it->get<double>() : 0.0;
}

double median_of(const std::map<std::string, Repetitions>& runs, const std::string& name, bool flops,
                 const std::string& what) {
  const auto it = runs.find(name);
  check(it != runs.end(), "{}: no limits: {} is not in the run (its baselines must be measured with it)", what, name);
  check(it->second.error.empty(), "{}: no limits: {} failed: {}", what, name, it->second.error);
  const auto& v = flops ? it->second.flops : it->second.bytes_per_second;
  check(!v.empty() && bench_stats::median(v) > 0, "{}: no limits: {} reports no {}", what, name,
        flops ? "flops" : "bytes_per_second");
  return bench_stats::median(v);
}

// One line per backend from touchstone-bench's context ("touchstone_device_<backend>"). The backends
// report one device string; where it names its driver (Mesa's llvmpipe: "LLVM 15.0.6") that is the
// string, so "driver" repeats what the backend said rather than guessing.
json devices_of(const json& context) {
  json out = json::array();
  if (!context.is_object()) return out;
  for (const auto& [key, value] : context.items()) {
    const std::string prefix = "touchstone_device_";
    if (key.rfind(prefix, 0) != 0 || !value.is_string()) continue;
    const std::string detail = value.get<std::string>();
    const bool available = detail.rfind("unavailable", 0) != 0;
    json driver = context.value("touchstone_driver_" + key.substr(prefix.size()), "");
    out.push_back({{"backend", key.substr(prefix.size())},
                   {"device", detail},
                   {"driver", available ? driver : json("")}});
  }
  return out;
}

// The device roof of a baseline/device_<roof>/<backend> name ("read", ...) and its backend; false for
// any other name.
bool device_roof_of(const std::string& name, std::string& roof, std::string& backend) {
  if (name.rfind(kDeviceRoofPrefix, 0) != 0) return false;
  const std::string rest = name.substr(std::string(kDeviceRoofPrefix).size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || rest.find('/', slash + 1) != std::string::npos) return false;
  roof = rest.substr(0, slash);
  backend = rest.substr(slash + 1);
  return roof == "read" || roof == "copy" || roof == "fma_f32" || roof == "fma_f16";
}

double* roof_field(DeviceRoofs& d, const std::string& roof) {
  if (roof == "read") return &d.read;
  if (roof == "copy") return &d.copy;
  if (roof == "fma_f32") return &d.fma_f32;
  if (roof == "fma_f16") return &d.fma_f16;
  return nullptr;
}

}  // namespace

std::string device_roof_filter(const std::vector<std::string>& backends) {
  std::string alt;
  for (const std::string& b : backends) alt += (alt.empty() ? "" : "|") + b;
  // Google Benchmark matches the full name, "/manual_time" included: the backend ends at a slash.
  return alt.empty() ? "" : "^baseline/device_[a-z0-9_]+/(" + alt + ")(/|$)";
}

json parse_bench_json(std::string text) {
  static const std::regex bare(R"((:\s*)-?(NaN|Infinity|nan|inf)(\s*[,}\n]))");
  return json::parse(std::regex_replace(text, bare, "$1null$3"), nullptr, /*allow_exceptions=*/false);
}

std::map<std::string, Repetitions> repetitions_of(const json& bench, const std::string& what) {
  check(bench.is_object() && bench.contains("benchmarks") && bench["benchmarks"].is_array(),
        "{}: not a Google Benchmark JSON (no \"benchmarks\" list)", what);
  std::map<std::string, Repetitions> runs;
  for (const json& r : bench["benchmarks"]) {
    check(r.is_object() && r.contains("name") && r["name"].is_string(), "{}: a benchmark entry without a name", what);
    if (r.value("run_type", "iteration") != "iteration") continue;  // mean/median/stddev aggregates
    const std::string name = short_name(r.value("run_name", r["name"].get<std::string>()));
    Repetitions& reps = runs[name];
    if (r.value("error_occurred", false)) {
      reps.error = r.value("error_message", "failed");
      continue;
    }
    check(r.contains("real_time") && r["real_time"].is_number(), "{}: {} has no real_time", what, name);
    reps.seconds.push_back(r["real_time"].get<double>() * time_unit_seconds(r.value("time_unit", "ns")));
    reps.bytes_per_second.push_back(number_or_zero(r, "bytes_per_second"));
    reps.flops.push_back(number_or_zero(r, "flops"));
    if (r.contains("write_share") && r["write_share"].is_number()) reps.write_share = r["write_share"].get<double>();
  }
  return runs;
}

nlohmann::json merge_processes(std::vector<json> runs) {
  check(!runs.empty(), "internal: no benchmark process to merge");
  if (runs.size() == 1) return std::move(runs[0]);
  json all = json::array();
  for (json& run : runs) {
    check(run.contains("benchmarks") && run["benchmarks"].is_array(), "touchstone-bench wrote no benchmarks list");
    for (json& r : run["benchmarks"])
      if (r.value("run_type", "iteration") == "iteration") all.push_back(std::move(r));
  }
  std::map<std::string, int> seen, count;
  const auto key = [](const json& r) { return r.value("run_name", r.value("name", std::string())); };
  for (const json& r : all) ++count[key(r)];
  for (json& r : all) {
    const std::string k = key(r);
    r["repetition_index"] = seen[k]++;
    r["repetitions"] = count[k];
  }
  json merged = std::move(runs[0]);
  merged["benchmarks"] = std::move(all);
  return merged;
}

Limits measure_limits(const std::map<std::string, Repetitions>& runs, const std::string& what) {
  Limits l;
  l.triad_bytes_per_second = median_of(runs, kTriad, false, what);
  if (const auto r = runs.find(kRead); r != runs.end() && r->second.error.empty() && !r->second.bytes_per_second.empty())
    l.read_bytes_per_second = bench_stats::median(r->second.bytes_per_second);
  l.fma_peak_flops = median_of(runs, kFmaPeak, true, what);
  for (const auto& [name, reps] : runs)
    if (name.rfind(kSgemmPrefix, 0) == 0 && reps.error.empty() && !reps.flops.empty())
      l.sgemm_flops[name.substr(std::string(kSgemmPrefix).size())] = bench_stats::median(reps.flops);
  check(l.sgemm_flops.count(kSgemmReference), "{}: no limits: {}{} is not in the run", what, kSgemmPrefix,
        kSgemmReference);
  for (const auto& [name, reps] : runs) {
    std::string roof, backend;
    if (!device_roof_of(name, roof, backend) || !reps.error.empty()) continue;
    const auto& v = roof.rfind("fma", 0) == 0 ? reps.flops : reps.bytes_per_second;
    if (!v.empty() && bench_stats::median(v) > 0) *roof_field(l.devices[backend], roof) = bench_stats::median(v);
  }
  return l;
}

json make_record(json bench, const RecordMeta& meta) {
  const Limits l = measure_limits(repetitions_of(bench, "touchstone-bench's output"), "touchstone-bench's output");
  json sgemm = json::object();
  for (const auto& [preset, flops] : l.sgemm_flops) sgemm[preset] = flops;
  json devices = json::object();
  for (const auto& [backend, d] : l.devices) {
    json roofs = json::object();
    for (const auto& [key, v] : {std::pair{"read", d.read}, {"copy", d.copy}, {"fma_f32", d.fma_f32}, {"fma_f16", d.fma_f16}})
      if (v > 0) roofs[key] = v;
    devices[backend] = roofs;
  }
  bench["touchstone"] = {{"format", 1},
                         {"commit", meta.commit},
                         {"dirty", meta.dirty},
                         {"build_type", meta.build_type},
                         {"processes", meta.processes},
                         {"limits",
                          {{"stream_triad_bytes_per_second", l.triad_bytes_per_second},
                           {"stream_read_bytes_per_second", l.read_bytes_per_second},
                           {"fma_peak_flops", l.fma_peak_flops},
                           {"sgemm_flops", sgemm},
                           {"device_roofs", devices}}},
                         {"devices", devices_of(bench.value("context", json::object()))}};
  return bench;
}

Record parse_record(json j, const std::string& what) {
  Record r;
  r.runs = repetitions_of(j, what);
  check(j.contains("touchstone") && j["touchstone"].is_object(),
        "{}: not a touchstone record (no \"touchstone\" key; write one with `touchstone bench record`)", what);
  const json& t = j["touchstone"];
  check(t.value("format", 0) == 1, "{}: record format {} is not 1", what, t.value("format", 0));
  r.meta = {t.value("commit", ""), t.value("dirty", false), t.value("build_type", "")};
  if (const auto p = t.find("processes"); p != t.end()) {
    check(p->is_number_integer() && p->get<int64_t>() >= 1 && p->get<int64_t>() <= 1000,
          "{}: \"processes\" is {}, not a count from 1 to 1000", what, p->dump());
    r.meta.processes = p->get<int>();
  }
  const auto lim = t.find("limits");
  check(lim != t.end() && lim->is_object(), "{}: no limits in the record", what);
  const auto num = [&](const char* key) {
    const auto it = lim->find(key);
    check(it != lim->end() && it->is_number() && it->get<double>() > 0, "{}: no limits: {} missing or not positive",
          what, key);
    return it->get<double>();
  };
  r.limits.triad_bytes_per_second = num("stream_triad_bytes_per_second");
  r.limits.fma_peak_flops = num("fma_peak_flops");
  // Optional (records made before the read stream have none; 0 where the run did not measure it).
  if (const auto rd = lim->find("stream_read_bytes_per_second"); rd != lim->end()) {
    check(rd->is_number() && rd->get<double>() >= 0, "{}: stream_read_bytes_per_second is not a number >= 0", what);
    r.limits.read_bytes_per_second = rd->get<double>();
  }
  const auto sg = lim->find("sgemm_flops");
  check(sg != lim->end() && sg->is_object(), "{}: no limits: sgemm_flops missing", what);
  for (const auto& [preset, v] : sg->items())
    if (v.is_number()) r.limits.sgemm_flops[preset] = v.get<double>();
  check(r.limits.sgemm_flops.count(kSgemmReference) && r.limits.sgemm_flops[kSgemmReference] > 0,
        "{}: no limits: sgemm_flops.{} missing", what, kSgemmReference);
  // Optional (records made before device roofs have none): {backend: {read, copy, fma_f32, fma_f16}}.
  if (const auto dv = lim->find("device_roofs"); dv != lim->end()) {
    check(dv->is_object(), "{}: device_roofs is not an object", what);
    for (const auto& [backend, roofs] : dv->items()) {
      check(roofs.is_object(), "{}: device_roofs.{} is not an object", what, backend);
      DeviceRoofs& d = r.limits.devices[backend];
      for (const auto& [roof, v] : roofs.items()) {
        double* f = roof_field(d, roof);
        check(f != nullptr, "{}: device_roofs.{} has an unknown roof '{}'", what, backend, roof);
        check(v.is_number() && v.get<double>() > 0, "{}: device_roofs.{}.{} is not a positive number", what, backend,
              roof);
        *f = v.get<double>();
      }
    }
  }
  r.json = std::move(j);
  return r;
}

Record load_record(const std::string& path) {
  std::ifstream in(path);
  check(in.good(), "{}: cannot open", path);
  json j = parse_bench_json({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
  check(!j.is_discarded(), "{}: not JSON", path);
  return parse_record(std::move(j), path);
}

}  // namespace ts::cli
