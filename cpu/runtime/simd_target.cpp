#include "cpu/runtime/simd_target.h"

#include <cctype>
#include <cstdlib>
#include <mutex>


#include "core/error.h"
#include "hwy/targets.h"

namespace ts::cpu {

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The compiled targets (Highway's HWY_TARGETS for this library), best first.
std::string compiled_names() {
  std::string out;
  for (int64_t t = 1; t != 0 && t <= HWY_SCALAR; t <<= 1)
    if (HWY_TARGETS & t) out += (out.empty() ? "" : ", ") + std::string(hwy::TargetName(t));
  return out;
}

std::string apply(const char* env) {
  if (env != nullptr && *env != '\0' && upper(env) != "BEST") {
    const std::string want = upper(env);
    int64_t target = 0;
    for (int64_t t = 1; t != 0 && t <= HWY_SCALAR; t <<= 1)
      if ((HWY_TARGETS & t) && want == hwy::TargetName(t)) target = t;
    check(target != 0, "TOUCHSTONE_CPU_SIMD={}: not a SIMD target of this build (compiled: {})", env, compiled_names());
    check((hwy::SupportedTargets() & target) != 0, "TOUCHSTONE_CPU_SIMD={}: this CPU cannot run it", env);
    // On x86 a better target has a lower bit: switch off every target above the one asked for.
    hwy::DisableTargets(target - 1);
  }
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  // SupportedTargets() re-detects and points the dispatch at every detected target before applying
  // the mask (Highway leaves the masked update to its dispatcher): make the next dynamic dispatch
  // choose again, from the masked set, or the cap never takes effect.
  hwy::GetChosenTarget().DeInit();
  return hwy::TargetName(supported & -supported);  // the lowest bit is the best target
}

}  // namespace

std::string select_simd_target() {
  static std::once_flag once;
  static std::string name, error;
  std::call_once(once, [] {
    try {
      name = apply(std::getenv("TOUCHSTONE_CPU_SIMD"));
    } catch (const Error& e) {
      error = e.what();
    }
  });
  check(error.empty(), "{}", error);
  return name;
}

bool cpu_avx512_vnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512vnni");
  return ok;
#else
  return false;
#endif
}

}  // namespace ts::cpu
