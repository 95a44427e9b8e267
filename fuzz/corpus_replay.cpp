// Replays every file of a fuzz corpus directory through the fuzz entry point (without libFuzzer).
// With --every-op, each file must also load as a valid case, and together they must cover every op
// of the catalog (the per-op seeds that fuzz/make-op-seeds.sh writes with `touchstone gen` from the
// smoke-tier cases of the enumeration, core/case_list.h: an op needs one to be seeded).
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <string>

#include "core/case_file.h"
#include "core/case_list.h"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  const bool every_op = argc == 3 && std::strcmp(argv[1], "--every-op") == 0;
  if (argc != 2 && !every_op) {
    std::cerr << "usage: " << argv[0] << " [--every-op] DIR\n";
    return 1;
  }
  LLVMFuzzerInitialize(&argc, &argv);
  const char* dir = argv[argc - 1];
  size_t n = 0;
  std::set<std::string> ops;
  int bad = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++n;
    if (!every_op) continue;
    try {
      ops.insert(ts::case_from_file(ts::parse_safetensors(bytes)).op->name());
    } catch (const ts::Error& err) {
      std::cerr << e.path().string() << ": not a valid case: " << err.what() << "\n";
      ++bad;
    }
  }
  if (every_op) {
    // Every op of the catalog needs a seed; one without a smoke-tier case has nothing to seed from.
    std::set<std::string> seedable;
    for (const ts::CaseEntry& e : ts::enumerate_cases({.max_tier = ts::Tier::Smoke})) seedable.insert(e.op->name());
    for (const ts::Op* op : ts::all_ops())
      if (!ops.count(op->name())) {
        std::cerr << "no valid seed for op " << op->name()
                  << (seedable.count(op->name()) ? "" : " (it has no smoke-tier case: give it one)") << "\n";
        ++bad;
      }
  }
  std::cout << n << " corpus inputs replayed without a crash";
  if (every_op) std::cout << "; " << ops.size() << " ops covered by valid cases";
  std::cout << "\n";
  return n > 0 && bad == 0 ? 0 : 1;
}
