// touchstone: list what each backend supports, run or check any op on any case file, and keep the
// golden files. Bad input: one line on stderr, exit 1, no partial output file.
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/comm.h"
#include "core/error.h"
#include "mpi/world_scope.h"

namespace {

constexpr const char* kUsage = R"(usage: touchstone <command> [options]

  list [--backend NAME] [--markdown]      ops x backends: supported, or why not
       [--json]                           (the table as JSON, for programs: touchstone report)
  matrix [--backend NAME] [--op NAME] [--tier smoke|ci|full]
                                          run the conformance cases; print op x backend pass counts
  cases [--op NAME] [--tier smoke|ci|full] the conformance cases and benchmark presets of each op
  coverage --backend NAME [--check FILE]  the conformance cases (op/case/dtype) the backend supports,
                                          one a line: ci/coverage/NAME.txt; with --check, exit 1
                                          when a case FILE lists is no longer supported
  catalog [--check FILE | --update FILE]  every op's tensors, parameters and tolerances from its
                                          description: docs/catalog.md's generated half
  gen OP CASE --out FILE [--dtype F32|F16|BF16] [--seed N]
                                          write a generated case (inputs + expected.*) as a case file
  run CASE --backend NAME --out OUT [--device D]
                                          run the op named in CASE; write every output to OUT
  check CASE --backend NAME [--device D]  compare with CASE's expected.* (or, without them, with the
                                          reference); print error figures; exit 0 pass, 1 fail
  judge CASE OUTPUTS                      judge a file of outputs another program produced (named as
                                          the op's outputs) against CASE's expected.* (or the
                                          reference's) with the matrix's tolerances; exit 0 pass, 1 fail
  golden regen [--op NAME] [--dir DIR]    rewrite the golden case files and their MANIFEST
  golden verify [--dir DIR]               exit 1 unless the reference reproduces every golden file
  gguf list FILE                          a GGUF checkpoint's tensors: kind, shape, offset, bytes
  gguf case FILE TENSOR --out CASE [--op gemm_quant|dequantize] [--m M] [--seed N] [--dtype D]
                                          one tensor's bytes, unchanged, as a case file with expected.*
  graph case MODEL.gguf --program llama_decode --layers A-B --steps N --out CASE [--ctx C] [--block-size B] [--seed S]
                                          a llama checkpoint's layers A..B, its tensors unchanged, as a graph
                                          case: a decode step per state, expected outputs from the reference
  checkpoint case FILE LAYER --out CASE [--m M] [--seed N] [--dtype D]
                                          a GPTQ / AWQ safetensors layer (model.layers.0.mlp.up_proj) as a
                                          gemm_gptq / gemm_awq case: bits, group size, act-order from its shapes
  report RUN.json [RUN.json ...] -o DIR   DIR/index.html: touchstone-bench runs or records as rooflines,
                                          fractions of the machine's limits, runs side by side, and the
                                          support matrix (needs python3-matplotlib)
  bench record [--out FILE] [--repetitions N] [--processes P] [--bench PATH] [--source DIR] [bench flags]
                                          run touchstone-bench (default filter: every cpu op; 10
                                          repetitions over 5 processes) with the machine's limits;
                                          write a baseline record (JSON)
  bench compare BASELINE [--against RUN] [--min-effect 0.1] [--alpha 0.05] [--report-only] [--save FILE]
                                          rerun (or read) the baseline's benchmarks; per benchmark the
                                          change of its fraction of the machine limit and of its raw
                                          speed, a U test, a verdict; exit 1 on a significant
                                          regression shown both ways

  --device D picks the device of an OpenCL / Vulkan backend: an index or part of its name
  (the same as TOUCHSTONE_OPENCL_DEVICE / TOUCHSTONE_VULKAN_DEVICE).
)";

}  // namespace

int main(int argc, char** argv) {
  // Under an MPI launcher every rank runs this main; only rank 0 prints or writes results.
  ts::WorldScope world_scope(argc, argv);
  const int rank = ts::world().rank();
  if (rank != 0 && !std::freopen("/dev/null", "w", stdout)) return 1;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 1 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    using namespace ts::cli;
    if (cmd == "list") return cmd_list(args);
    if (cmd == "cases") return cmd_cases(args);
    if (cmd == "coverage") return cmd_coverage(args);
    if (cmd == "catalog") return cmd_catalog(args);
    if (cmd == "matrix") return cmd_matrix(args);
    if (cmd == "gen") return cmd_gen(args);
    if (cmd == "run") return cmd_run(args);
    if (cmd == "check") return cmd_check(args);
    if (cmd == "judge") return cmd_judge(args);
    if (cmd == "golden") return cmd_golden(args);
    if (cmd == "gguf") return cmd_gguf(args);
    if (cmd == "graph") return cmd_graph(args);
    if (cmd == "checkpoint") return cmd_checkpoint(args);
    if (cmd == "report") return cmd_report(args);
    if (cmd == "bench") return cmd_bench(args);
    ts::fail("unknown command '{}' (touchstone --help lists them)", cmd);
  } catch (const ts::RanksAgreedError& e) {
    if (rank == 0) std::cerr << "touchstone: " << e.what() << "\n";  // every rank has it: one line
  } catch (const ts::Error& e) {
    std::cerr << "touchstone: " << (rank ? "rank " + std::to_string(rank) + ": " : "") << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "touchstone: out of memory (a tensor in the input is too large?)\n";
  } catch (const std::exception& e) {
    std::cerr << "touchstone: internal error: " << e.what() << "\n";
  }
  return 1;
}
