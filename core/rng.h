#pragma once
// A seeded generator whose stream is the same on every machine and standard library (the standard
// distributions are not portable, so the transforms are written out here).
#include <cmath>
#include <cstdint>
#include <string_view>

namespace ts {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += kStep);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  double normal() {  // Box-Muller, one value per call: two draws
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // The stream `draws` calls of next() on: splitmix64's state moves by one constant a draw, so any
  // offset is one multiply away (generators split a long stream across threads with the same values).
  Rng skipped(uint64_t draws) const {
    Rng r(s_);
    r.s_ += draws * kStep;
    return r;
  }

 private:
  static constexpr uint64_t kStep = 0x9e3779b97f4a7c15ull;
  uint64_t s_;
};

// A stable 64-bit hash (FNV-1a) for deriving per-case seeds from names.
inline uint64_t stable_hash(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace ts
