// touchstone checkpoint case: one quantized layer of a GPTQ or AWQ checkpoint (a safetensors file as
// AutoGPTQ or AutoAWQ writes it) as a case of gemm_gptq or gemm_awq. Bits, group size and act-order
// come from the layer's shapes and g_idx (core/quant/checkpoint.h); only the layer's tensors are read
// from the file.
#include <iostream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/weight_case.h"
#include "core/ops/core_params.h"
#include "core/quant/checkpoint.h"

namespace ts::cli {

int cmd_checkpoint(const std::vector<std::string>& argv) {
  Args a(argv, {"m", "seed", "dtype", "out"}, {});
  check(a.positional().size() == 3 && a.positional()[0] == "case",
        "usage: touchstone checkpoint case FILE LAYER_PREFIX --out CASE [--m M] [--seed N] [--dtype D]");
  const std::string& path = a.positional()[1];
  const std::string& prefix = a.positional()[2];
  const std::string out = a.require("out");
  check_output_path(out, path);
  int64_t m = 1;
  if (auto s = a.get("m")) {
    m = params_from_map<GemmParams>({{"m", *s}, {"n", "1"}, {"k", "1"}}).m;  // the parameter parser's integer check
    check(m > 0, "--m must be positive, is {}", m);
  }
  const SafetensorsFile f = read_safetensors(path, [&](const std::string& n) { return quant::in_layer(n, prefix); });
  const quant::CheckpointLayer layer = quant::checkpoint_layer(f, prefix, m);
  const Problem pr = make_problem(*layer.op, layer.params, activation_dtype_flag(a.get("dtype")));
  const uint64_t seed = seed_flag(a.get("seed"), layer.op->name() + "/" + prefix);
  write_weight_case(out, pr, seed, [&](TensorMap& t) {
    for (const auto& [name, tensor] : layer.tensors) t.at(name) = tensor;
  });
  std::cout << fmt::format("wrote {} ({} {}, {} of {}, seed {})\n", out, layer.op->name(),
                           params_str(layer.op->to_map(layer.params)), prefix, path, seed);
  return 0;
}

}  // namespace ts::cli
