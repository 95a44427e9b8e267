// Replays every file of a fuzz corpus directory through the fuzz entry point (without libFuzzer).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: safetensors-corpus-replay DIR\n";
    return 1;
  }
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(argv[1])) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++n;
  }
  std::cout << n << " corpus inputs replayed without a crash\n";
  return n > 0 ? 0 : 1;
}
