#include "cli/args.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>

namespace ts::cli {

Args::Args(const std::vector<std::string>& argv, std::set<std::string> with_value, std::set<std::string> switches) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      pos_.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (with_value.count(name)) {
      if (!inline_value) {
        check(i + 1 < argv.size(), "--{} needs a value", name);
        value = argv[++i];
      }
      values_[name] = value;
    } else if (switches.count(name) && !inline_value) {
      switches_.insert(name);
    } else {
      fail("unknown option --{}", name);
    }
  }
}

std::optional<std::string> Args::get(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Args::require(const std::string& flag) const {
  auto v = get(flag);
  check(v.has_value(), "missing --{}", flag);
  return *v;
}

void apply_device_flag(const Args& a, const std::string& backend) {
  auto d = a.get("device");
  if (!d) return;
  std::string var = "TOUCHSTONE_";
  for (char c : backend) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  var += "_DEVICE";
  setenv(var.c_str(), d->c_str(), 1);
}

void check_output_path(const std::string& out, const std::string& input) {
  namespace fs = std::filesystem;
  check(!out.empty(), "--out is empty: give the output file's name");
  std::error_code ec;
  check(!fs::is_directory(out, ec), "--out '{}' is a directory: give a file name", out);
  const bool same = fs::exists(out, ec) ? fs::equivalent(out, input, ec)
                                        : fs::weakly_canonical(out, ec) == fs::weakly_canonical(input, ec);
  check(!same, "--out '{}' is the input case file '{}': write the outputs elsewhere", out, input);
}

}  // namespace ts::cli
