// touchstone golden regen | verify: the golden case files under golden/<family>/, named
// <op>__<case>__<dtype>.safetensors, and golden/MANIFEST (sha256, size, path per line).
// A golden file is a case whose expected.* the reference produced; verify re-runs the reference
// on every stored file and requires the same bits, so a change to the reference cannot slip by.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "conformance/golden_dir.h"
#include "core/backend.h"
#include "core/case_file.h"
#include "core/case_list.h"
#include "core/sha256.h"
#include "core/tolerance.h"

namespace ts::cli {

namespace {

namespace fs = std::filesystem;

// Goldens stay small (the whole set well under 5 MB): a case file larger than this is not stored;
// the matrix still runs that case from its generator.
constexpr size_t kMaxGoldenFileBytes = 32 * 1024;

std::string golden_dir(const Args& a) {
  if (auto dir = a.get("dir")) return *dir;
  const std::string found = default_golden_dir();
  return found.empty() ? a.require("dir") : found;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  check(static_cast<bool>(in), "cannot open '{}'", p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> golden_files(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

void write_manifest(const fs::path& dir) {
  std::string text = "# sha256  bytes  path (touchstone golden regen writes this; golden verify checks it)\n";
  size_t total = 0;
  for (const auto& f : golden_files(dir)) {
    const std::string bytes = read_file(f);
    total += bytes.size();
    text += fmt::format("{}  {}  {}\n", sha256_hex(bytes), bytes.size(), fs::relative(f, dir).string());
  }
  const fs::path tmp = dir / "MANIFEST.partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      fail("cannot write {}", tmp.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, dir / "MANIFEST", ec);
  if (ec) {
    std::error_code rm;
    fs::remove(tmp, rm);
    fail("cannot rename {} to MANIFEST: {}", tmp.string(), ec.message());
  }
  std::cout << fmt::format("MANIFEST: {} files, {:.1f} KiB in all\n", golden_files(dir).size(), total / 1024.0);
}

int regen(const Args& a) {
  const fs::path dir = golden_dir(a);
  const auto only = a.get("op");
  if (only) op_or_throw(*only);
  size_t written = 0, too_large = 0;
  for (const Op* op : all_ops()) {
    if (only && *only != op->name()) continue;
    const fs::path family_dir = dir / op->family();
    fs::create_directories(family_dir);
    for (const auto& f : golden_files(family_dir))  // stale files of this op go first
      if (f.filename().string().rfind(op->name() + "__", 0) == 0) fs::remove(f);
    for (const CaseEntry& e : op_cases(*op, {.max_tier = Tier::Ci})) {
      const Case c = generate_case(e.problem(), e.seed());
      const SafetensorsFile file = case_to_file(*op, c.params, c.tensors, c.expected, c.seed);
      if (serialize_safetensors(file).size() > kMaxGoldenFileBytes) {
        ++too_large;
        continue;
      }
      write_safetensors((dir / e.golden_path()).string(), file);
      ++written;
    }
  }
  std::cout << fmt::format("wrote {} golden files ({} cases over {} KiB left to the generator)\n", written,
                           too_large, kMaxGoldenFileBytes / 1024);
  write_manifest(dir);
  return 0;
}

int verify(const Args& a) {
  const fs::path dir = golden_dir(a);
  const fs::path manifest = dir / "MANIFEST";
  check(fs::exists(manifest), "no MANIFEST in {} (run touchstone golden regen)", dir.string());
  std::istringstream lines(read_file(manifest));
  std::string line;
  std::vector<std::string> problems;
  std::set<std::string> listed;
  Backend& ref = backend("reference");
  size_t checked = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string sha, rel;
    size_t size = 0;
    if (!(fields >> sha >> size >> rel)) {
      problems.push_back("malformed MANIFEST line: " + line);
      continue;
    }
    listed.insert(rel);
    const fs::path path = dir / rel;
    if (!fs::exists(path)) {
      problems.push_back(rel + ": listed in MANIFEST but missing");
      continue;
    }
    const std::string bytes = read_file(path);
    if (bytes.size() != size || sha256_hex(bytes) != sha) {
      problems.push_back(rel + ": checksum differs from MANIFEST");
      continue;
    }
    try {
      const Case c = case_from_file(parse_safetensors(bytes));
      check(!c.expected.empty(), "no expected.* tensors");
      TensorMap io = working_set(c);
      run_case(ref, c, io);
      for (const auto& [name, want] : c.expected) {
        const ErrorReport r = compare(want, io.at(name), tol::exact());
        if (!r.pass()) problems.push_back(fmt::format("{}: the reference no longer reproduces {}: {}", rel, name, r.summary()));
      }
    } catch (const Error& e) {
      problems.push_back(fmt::format("{}: {}", rel, e.what()));
    }
    ++checked;
  }
  for (const auto& f : golden_files(dir))
    if (!listed.count(fs::relative(f, dir).string()))
      problems.push_back(fs::relative(f, dir).string() + ": not in MANIFEST (run touchstone golden regen)");
  for (const auto& p : problems) std::cout << "FAIL " << p << "\n";
  std::cout << fmt::format("golden verify: {} files checked, {} problems\n", checked, problems.size());
  return problems.empty() ? 0 : 1;
}

}  // namespace

int cmd_golden(const std::vector<std::string>& argv) {
  Args a(argv, {"op", "dir"}, {});
  check(a.positional().size() == 1 && (a.positional()[0] == "regen" || a.positional()[0] == "verify"),
        "usage: touchstone golden regen [--op NAME] | verify");
  if (a.positional()[0] == "regen") return regen(a);
  check(!a.get("op"), "golden verify checks every file; --op is for regen");
  return verify(a);
}

}  // namespace ts::cli
