// touchstone judge: outputs another program produced (a Triton kernel, a PyTorch draft, an engine's
// dump) judged against a case by the conformance matrix's own judge (conformance/check.h): the same
// per-output tolerances and masks, the same report.
#include <filesystem>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "conformance/check.h"
#include "core/case_file.h"

namespace ts::cli {

int cmd_judge(const std::vector<std::string>& argv) {
  Args a(argv, {}, {});
  check(a.positional().size() == 2, "judge takes a case file and a file of outputs (touchstone judge CASE OUTPUTS)");
  const std::string case_path = a.positional()[0], outputs_path = a.positional()[1];
  Case c = load_case(case_path);
  const SafetensorsFile outputs = read_safetensors(outputs_path);
  // A file `touchstone run` wrote says which op it ran: outputs of another op are the wrong file.
  if (auto it = outputs.metadata.find("op"); it != outputs.metadata.end())
    check(it->second == c.op->name(), "{} holds outputs of {}, but {} is a {} case", outputs_path, it->second,
          case_path, c.op->name());
  const ViewMap got = views(outputs.tensors);
  check_output_set(c, got);
  const std::string against = fill_expected(c);
  const Verdict v = judge_outputs(c, got);
  std::cout << fmt::format("{}  against: {}\n", verdict_report("outputs=" + outputs_path, c,
                                                              std::filesystem::path(case_path).stem().string(), v),
                           against);
  std::cout << (v.pass ? "PASS\n" : "FAIL\n");
  return v.pass ? 0 : 1;
}

}  // namespace ts::cli
