#include "cli/bench_run.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "cli/bench_record.h"
#include "core/error.h"

extern char** environ;

namespace ts::cli {

namespace fs = std::filesystem;

std::string find_bench_binary(const std::optional<std::string>& flag) {
  if (flag) {
    check(access(flag->c_str(), X_OK) == 0, "--bench {}: not an executable", *flag);
    return *flag;
  }
  if (const char* env = std::getenv("TOUCHSTONE_BENCH"); env && *env) {
    check(access(env, X_OK) == 0, "TOUCHSTONE_BENCH={}: not an executable", env);
    return env;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  check(!ec, "cannot find this program's own path (/proc/self/exe); pass --bench PATH");
  for (const fs::path& p : {self.parent_path().parent_path() / "bench" / "touchstone-bench",
                            self.parent_path() / "touchstone-bench"})
    if (access(p.c_str(), X_OK) == 0) return p.string();
  fail("no touchstone-bench beside {} (build the touchstone-bench target, or pass --bench PATH)", self.string());
}

bool is_bench_flag(const std::string& a) {
  return a.rfind("--benchmark_", 0) == 0 || a.rfind("--dtypes=", 0) == 0 || a.rfind("--seed=", 0) == 0 ||
         a.rfind("--cold-iterations=", 0) == 0 || a == "--include-reference" || a == "--warm-cache";
}

std::string regex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

nlohmann::json run_bench(const std::string& binary, const std::vector<std::string>& args) {
  const fs::path out = fs::temp_directory_path() / ("touchstone-bench." + std::to_string(getpid()) + ".json");
  fs::remove(out);
  std::vector<std::string> words = {binary};
  words.insert(words.end(), args.begin(), args.end());
  words.push_back("--benchmark_out=" + out.string());
  words.push_back("--benchmark_out_format=json");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  check(rc == 0, "cannot run {}: {}", binary, std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) check(errno == EINTR, "waiting for {}: {}", binary, std::strerror(errno));
  std::ifstream in(out);
  nlohmann::json j = parse_bench_json({std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
  in.close();
  fs::remove(out);
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "{} failed (exit status {}; a filter that matches nothing?)",
        binary, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  check(!j.is_discarded(), "{} wrote no JSON", binary);
  return j;
}

std::vector<std::string> list_benchmarks(const std::string& binary, const std::string& filter) {
  const fs::path out = fs::temp_directory_path() / ("touchstone-bench-list." + std::to_string(getpid()) + ".txt");
  std::vector<std::string> words = {binary, "--benchmark_filter=" + filter, "--benchmark_list_tests=true"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  check(rc == 0, "cannot run {}: {}", binary, std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) check(errno == EINTR, "waiting for {}: {}", binary, std::strerror(errno));
  std::vector<std::string> names;
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  in.close();
  fs::remove(out);
  return names;  // a filter that matches nothing lists nothing (and exits 1): the run itself reports it
}

std::vector<std::string> device_backends_of(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    if (n.rfind("baseline/", 0) == 0) continue;
    const size_t a = n.find('/'), b = a == std::string::npos ? a : n.find('/', a + 1);
    if (b == std::string::npos) continue;
    const std::string backend = n.substr(a + 1, b - a - 1);
    if (backend != "cpu" && backend != "reference" && std::find(out.begin(), out.end(), backend) == out.end())
      out.push_back(backend);
  }
  return out;
}

}  // namespace ts::cli
