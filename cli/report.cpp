// touchstone report RUN.json [RUN.json ...] -o DIR: an HTML page of benchmark runs, drawn by
// report/touchstone_report.py with matplotlib. This command only finds the script and a python3 that
// can import matplotlib, then hands over to it (exec): the script checks the inputs, and its exit
// status and one-line errors are the command's.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/args.h"
#include "cli/commands.h"

extern char** environ;

namespace ts::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kScript = "touchstone_report.py";

fs::path self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  check(!ec, "report: cannot locate the touchstone binary (/proc/self/exe: {})", ec.message());
  return p;
}

// In an install tree the script sits in <prefix>/share/touchstone/report (TOUCHSTONE_REPORT_INSTALL_REL,
// relative to the binary's folder); in a build tree, in the source tree's report/ (baked at configure time).
fs::path find_script(const fs::path& exe) {
  const fs::path installed = (exe.parent_path() / TOUCHSTONE_REPORT_INSTALL_REL / kScript).lexically_normal();
  const fs::path source = fs::path(TOUCHSTONE_REPORT_SOURCE_DIR) / kScript;
  for (const fs::path& p : {installed, source})
    if (fs::is_regular_file(p)) return p;
  fail("report: the report script is missing (looked for {} and {})", installed.string(),
       source.string());
}

// Runs `python -c "import matplotlib"` quietly; returns "" when it works, or why not.
std::string probe(const std::string& python) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> words = {python, "-c", "import matplotlib"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, python.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return fmt::format("{} not found", python);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return fmt::format("{} not found", python);
  return fmt::format("{} cannot import matplotlib", python);
}

// TOUCHSTONE_PYTHON when set (and then only it); otherwise python3 on PATH, then Debian's own
// /usr/bin/python3 (python3-matplotlib installs for that one; a PATH python3 may be another).
std::string find_python() {
  std::vector<std::string> candidates = {"python3", "/usr/bin/python3"};
  if (const char* env = std::getenv("TOUCHSTONE_PYTHON"); env && *env) candidates = {env};
  std::vector<std::string> why;
  for (const std::string& py : candidates) {
    std::string no = probe(py);
    if (no.empty()) return py;
    why.push_back(std::move(no));
  }
  fail("report needs python3 with matplotlib (Debian: apt-get install python3-matplotlib): {}", fmt::join(why, "; "));
}

}  // namespace

int cmd_report(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& w : argv) words.push_back(w == "-o" ? "--out" : w);
  Args a(words, {"out"}, {});
  check(!a.positional().empty(), "report: no run given (touchstone report RUN.json [RUN.json ...] -o DIR)");
  const auto out = a.get("out");
  check(out.has_value() && !out->empty(), "report: no output folder (-o DIR)");
  const fs::path exe = self_exe();
  const fs::path script = find_script(exe);
  const std::string python = find_python();

  std::vector<std::string> cmd = {python, script.string(), "--touchstone", exe.string(), "--out", *out, "--"};
  cmd.insert(cmd.end(), a.positional().begin(), a.positional().end());
  std::vector<char*> cargv;
  for (auto& w : cmd) cargv.push_back(w.data());
  cargv.push_back(nullptr);
  execvp(python.c_str(), cargv.data());
  fail("report: cannot run {}: {}", python, std::strerror(errno));
}

}  // namespace ts::cli
