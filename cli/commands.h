#pragma once
#include <string>
#include <vector>

namespace ts::cli {

// Each returns the process exit code; bad input throws ts::Error (main prints it and exits 1).
int cmd_list(const std::vector<std::string>& argv);
int cmd_run(const std::vector<std::string>& argv);
int cmd_check(const std::vector<std::string>& argv);
int cmd_judge(const std::vector<std::string>& argv);
int cmd_matrix(const std::vector<std::string>& argv);
int cmd_catalog(const std::vector<std::string>& argv);
int cmd_cases(const std::vector<std::string>& argv);
int cmd_coverage(const std::vector<std::string>& argv);
int cmd_gen(const std::vector<std::string>& argv);
int cmd_golden(const std::vector<std::string>& argv);
int cmd_checkpoint(const std::vector<std::string>& argv);
int cmd_gguf(const std::vector<std::string>& argv);
int cmd_graph(const std::vector<std::string>& argv);
int cmd_report(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);

}  // namespace ts::cli
