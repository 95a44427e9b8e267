#pragma once
// The one enumeration of the catalog's cases: op x case (or benchmark preset) x dtype, with its tier
// and its names. The conformance matrix, `touchstone matrix`, `list`, golden regen, the benchmarks and
// the fuzz corpus's coverage check all walk this list, and every name a case goes by (a test, a golden
// file, a benchmark, a seed) is spelt here from the same three parts, so that the known-failure list,
// CI filters, goldens and recorded benchmarks keep naming the same case.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/op.h"

namespace ts {

// Which of an op's lists: its conformance cases (OpDef::cases) or its benchmark presets (OpDef::benches).
enum class CaseSet { Conformance, Benchmark };

struct CaseFilter {
  CaseSet set = CaseSet::Conformance;
  Tier max_tier = Tier::Full;  // cases of a higher tier are left out (tiers nest: smoke is in ci)
  std::string op, family;      // empty: every op / family
  // Empty: every dtype a case lists, in its order. Else only these, in this order, where the case lists them.
  std::vector<DType> dtypes;
  // Anything else that leaves cases out (the matrix under mpiexec keeps one world's); empty: none.
  std::function<bool(const Op&, const CaseSpec&)> keep;
};

// The names of one case, from its parts; for op "flash_attention", case "chunked_prefill_gqa8_hd96",
// dtype BF16: the key "flash_attention/chunked_prefill_gqa8_hd96/BF16" (what the seed hashes, and the
// coverage manifests' line) and the file stem "flash_attention__chunked_prefill_gqa8_hd96__BF16".
std::string case_key(std::string_view op, std::string_view case_name, DType dt);
std::string case_file_stem(std::string_view op, std::string_view case_name, DType dt);
// The op of a golden or failure file's stem (the part before the first "__").
std::string_view op_of_file_stem(std::string_view stem);

struct CaseEntry {
  const Op* op = nullptr;
  const CaseSpec* spec = nullptr;  // in op->cases() or op->benches(): lives as long as the catalog
  DType dtype = DType::F32;

  Tier tier() const { return spec->tier; }
  const std::string& case_name() const { return spec->name; }
  std::string name() const;  // chunked_prefill_gqa8_hd96/BF16: the case within its op
  std::string key() const { return case_key(op->name(), spec->name, dtype); }
  std::string file_stem() const { return case_file_stem(op->name(), spec->name, dtype); }
  // The golden file's path below the golden directory: <family>/<file stem>.safetensors.
  std::string golden_path() const;
  // The conformance matrix's GoogleTest name, which is also its --gtest_filter: its suite
  // (cpu/flash_attention) "." its name(): cpu/flash_attention.chunked_prefill_gqa8_hd96/BF16.
  std::string test_name(std::string_view backend) const;
  std::string test_suite(std::string_view backend) const;
  // A benchmark preset's name: flash_attention/cpu/decode_h32_kv8_hd128_ctx4096/F32.
  std::string bench_name(std::string_view backend) const;
  // The file a case that failed on a backend is written to, for `touchstone check`:
  // cpu__flash_attention__chunked_prefill_gqa8_hd96__BF16.
  std::string failure_stem(std::string_view backend) const;
  uint64_t seed() const;    // case_seed: the same in the matrix, the goldens and `touchstone gen`
  Problem problem() const;  // the parameters checked, then make_problem
};

// One op's entries: its cases in their order, each case's dtypes in theirs (the filter's op and family
// are not consulted).
std::vector<CaseEntry> op_cases(const Op& op, const CaseFilter& f = {});
// Every op's, in catalog order. An op or family filter that names nothing known is an Error.
std::vector<CaseEntry> enumerate_cases(const CaseFilter& f = {});

}  // namespace ts
