// touchstone gguf list | case: a real checkpoint's tensors in. `list` shows what a GGUF file holds;
// `case` writes one of its tensors, bytes unchanged, as a case file of an op that takes a GGUF
// weight (dequantize, gemm_quant, ...), with the reference's outputs as expected.*: a golden made of
// the checkpoint's own bytes.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/weight_case.h"
#include "core/backend.h"
#include "core/case_file.h"
#include "core/gguf.h"
#include "core/ops/describe.h"

namespace ts::cli {

namespace {

int list(const Args& a) {
  check(a.positional().size() == 2, "usage: touchstone gguf list FILE");
  const gguf::File f(a.positional()[1]);
  const gguf::Header& h = f.header();
  std::cout << fmt::format("{}: GGUF v{}, alignment {}, {} tensors, {} metadata entries\n", f.path(), h.version,
                           h.alignment, h.tensors.size(), h.metadata.size());
  for (const char* key : {"general.architecture", "general.name"})
    if (const gguf::Value* v = h.find(key)) std::cout << fmt::format("{}: {}\n", key, v->str());
  std::cout << fmt::format("{:<40} {:<8} {:<20} {:>14} {:>14}\n", "tensor", "kind", "shape", "offset", "bytes");
  for (const gguf::TensorInfo& t : h.tensors)
    std::cout << fmt::format("{:<40} {:<8} {:<20} {:>14} {:>14}\n", gguf::printable(t.name), t.type->name,
                             shape_str(t.shape()),
                             t.offset, t.bytes);
  return 0;
}

// The parameters of `op` for weight tensor t: kind, n_rows, n_cols, and m when the op has it. An op
// without the first three takes no GGUF weight.
ParamMap weight_params(const Op& op, const gguf::TensorInfo& t, const Args& a) {
  // param_names() spells enums "kind=Q4_0|..." and optional fields "name?": the name is what precedes.
  const auto names = op.param_names();
  const auto has = [&](std::string_view n) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& s) {
      return s.substr(0, s.find_first_of("=?")) == n;
    });
  };
  check(has("kind") && has("n_rows") && has("n_cols"),
        "{} does not take a GGUF weight (it has no kind, n_rows and n_cols parameters)", op.name());
  ParamMap m{{"kind", std::string(enum_name(t.kind()))},
             {"n_rows", std::to_string(t.n_rows())},
             {"n_cols", std::to_string(t.n_cols())}};
  if (has("m")) {
    check(t.ne.size() >= 2, "{}: tensor '{}' is 1-D ({} values): {} takes a matrix", op.name(), gguf::printable(t.name), t.ne[0],
          op.name());
    m["m"] = a.get("m").value_or("1");
  } else {
    check(!a.get("m"), "{} has no parameter m", op.name());
  }
  return m;
}

// The op's one input whose dtype the op fixes (U8 blocks, or the kind's float dtype): the weight.
const TensorDecl& weight_decl(const Problem& pr) {
  const TensorDecl* w = nullptr;
  for (const TensorDecl& d : pr.decls)
    if (d.role == Role::In && d.rule != DTypeRule::Activation) {
      check(w == nullptr, "{} has more than one weight input ({}, {}): gguf case fills only one", pr.op->name(),
            w ? w->name : "", d.name);
      w = &d;
    }
  check(w != nullptr, "{} has no weight input", pr.op->name());
  return *w;
}

int write_case(const Args& a) {
  check(a.positional().size() == 3, "usage: touchstone gguf case FILE TENSOR [--op OP] --out CASE");
  const std::string out = a.require("out");
  check_output_path(out, a.positional()[1]);
  const gguf::File f(a.positional()[1]);
  const gguf::TensorInfo& t = f.tensor(a.positional()[2]);
  const Op& op = op_or_throw(a.get("op").value_or("gemm_quant"));
  const Params p = op.parse(weight_params(op, t, a));
  const Problem pr = make_problem(op, p, activation_dtype_flag(a.get("dtype")));
  const TensorDecl& w = weight_decl(pr);
  const bool activations = std::any_of(pr.decls.begin(), pr.decls.end(),
                                       [](const TensorDecl& d) { return d.rule == DTypeRule::Activation; });
  check(activations || !a.get("dtype"), "{} has no activation tensors: --dtype does not apply", op.name());
  const uint64_t seed = seed_flag(a.get("seed"), op.name() + "/" + t.name);
  write_weight_case(out, pr, seed, [&](TensorMap& tensors) {
    Tensor& weight = tensors.at(w.name);
    check(weight.nbytes() == t.bytes, "tensor '{}': {} bytes in the file, {} {} of {} needs {}", gguf::printable(t.name), t.bytes,
          dtype_name(w.dtype), shape_str(w.shape), op.name(), weight.nbytes());
    f.read(t, weight.data());
  });
  std::cout << fmt::format("wrote {} ({} {}, {} of {}, seed {})\n", out, op.name(), op.variant(p), gguf::printable(t.name), f.path(),
                           seed);
  return 0;
}

}  // namespace

int cmd_gguf(const std::vector<std::string>& argv) {
  Args a(argv, {"op", "m", "seed", "dtype", "out"}, {});
  const std::string sub = a.positional().empty() ? "" : a.positional()[0];
  if (sub == "list") {
    check(!a.get("op") && !a.get("m") && !a.get("seed") && !a.get("dtype") && !a.get("out"),
          "gguf list takes only a file");
    return list(a);
  }
  if (sub == "case") return write_case(a);
  fail("usage: touchstone gguf list FILE | gguf case FILE TENSOR [--op OP] [--m M] [--seed S] [--dtype D] --out CASE");
}

}  // namespace ts::cli
