// touchstone gen / run / check: one case file through one backend.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>
#include <iostream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "conformance/check.h"
#include "core/backend.h"
#include "core/case_file.h"
#include "core/collective.h"

namespace ts::cli {

namespace {

std::string single_case_path(const Args& a, const char* cmd) {
  check(a.positional().size() == 1, "{} takes exactly one case file", cmd);
  return a.positional()[0];
}

Backend& available_backend(const Args& a) {
  const std::string name = a.require("backend");
  apply_device_flag(a, name);
  Backend& b = backend(name);
  const Availability av = b.availability();
  check(av.ok, "backend {} is unavailable: {}", name, av.detail);
  return b;
}

// Everything a rank reads and checks before it runs anything (its flags, its backend, its case file),
// agreed across the ranks of an MPI launch: a rank whose file is missing or bad ends every rank with
// one line instead of leaving the others waiting in the collective. Then a collective case is checked
// against the world and against every rank's call, before any data moves.
template <class F> auto on_every_rank(F&& prepare) {
  std::string error;
  std::optional<std::invoke_result_t<F>> r;
  try {
    r.emplace(prepare());
  } catch (const Error& e) {
    error = e.what();
  }
  agree_or_throw(error);
  if (is_collective(*r->c.op)) agree_on_case(r->c);
  return std::move(*r);
}

struct Prepared {
  Backend* b;
  Case c;
};

}  // namespace

int cmd_gen(const std::vector<std::string>& argv) {
  Args a(argv, {"out", "dtype", "seed"}, {});
  check(a.positional().size() == 2, "gen takes an op and a case name (touchstone cases lists them)");
  const Op& op = op_or_throw(a.positional()[0]);
  std::optional<uint64_t> seed;
  if (auto s = a.get("seed")) {
    try {
      size_t used = 0;
      seed = std::stoull(*s, &used);
      check(used == s->size(), "--seed '{}' is not an integer", *s);
    } catch (const std::logic_error&) {
      fail("--seed '{}' is not an integer", *s);
    }
  }
  const std::string out = a.require("out");
  check(!out.empty(), "--out is empty: give the output file's name");
  const Case c = named_case(op, a.positional()[1], a.get("dtype").value_or(""), seed);
  write_safetensors(out, case_to_file(op, c.params, c.tensors, c.expected, c.seed));
  std::cout << fmt::format("wrote {} ({} {} {}, seed {})\n", out, op.name(), a.positional()[1], dtype_name(c.dtype),
                           c.seed.value_or(0));
  return 0;
}

int cmd_run(const std::vector<std::string>& argv) {
  Args a(argv, {"backend", "out", "device"}, {});
  const std::string path = single_case_path(a, "run");
  const std::string out = a.require("out");
  // Named members rather than a structured binding: the lambdas below capture the case, and clang
  // before 16 cannot capture a structured binding.
  Prepared prepared = on_every_rank([&] {
    check_output_path(out, path);
    Backend* b = &available_backend(a);
    return Prepared{b, load_case(path)};
  });
  Backend& b = *prepared.b;
  Case& c = prepared.c;
  TensorMap io = working_set(c);
  run_case(b, c, io);  // a collective's every rank's output gathered (core/collective.h)
  if (world().rank() != 0) return 0;  // rank 0 alone writes
  SafetensorsFile f;
  f.metadata = c.op->to_map(c.params);
  f.metadata["op"] = c.op->name();
  f.metadata["backend"] = b.name();
  for (const auto& name : c.output_names()) f.tensors.emplace(name, io.at(name));
  write_safetensors(out, f);
  std::cout << fmt::format("{} on {}: wrote {}\n", c.op->name(), b.name(), out);
  return 0;
}

int cmd_check(const std::vector<std::string>& argv) {
  Args a(argv, {"backend", "device"}, {});
  const std::string path = single_case_path(a, "check");
  Prepared prepared = on_every_rank([&] {
    Backend* b = &available_backend(a);
    return Prepared{b, load_case(path)};
  });
  Backend& b = *prepared.b;
  Case& c = prepared.c;
  const std::string against = fill_expected(c);
  // A "no" from supports() and a refusal at plan or launch time read the same.
  const auto refuse = [&](const std::string& reason) {
    fail("{} does not support {} ({}{}{}): unsupported: {}", b.name(), c.op->name(), dtype_name(c.dtype),
         c.variant.empty() ? "" : ", ", c.variant, reason);
  };
  if (const Support s = b.supports(c); !s.ok) refuse(s.reason);
  const Verdict v = check_case(b, c, false);
  if (!v.unsupported.empty()) refuse(v.unsupported);
  // Figures and tolerance per output: an op may judge its outputs differently.
  std::cout << fmt::format("{} {} on {} against {}\n  params: {}\n{}", c.op->name(), dtype_name(c.dtype), b.name(),
                           against, params_str(c.metadata), v.describe(true));
  std::cout << (v.pass ? "PASS\n" : "FAIL\n");
  return v.pass ? 0 : 1;
}

}  // namespace ts::cli
