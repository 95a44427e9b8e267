#pragma once
// The C++ mirror of a shader's push-constant block (shaders/push.glsl): from the same field list,
// the block as the shader sees it (Name: uint32_t / float members, for the layout tests), the
// planner's form (Name##In: 64-bit integers, narrowed checked when packed) and its words in block
// order (push_words), through Push's checked 32-bit conversion.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vulkan/plan.h"

namespace ts::vk {

// A member as the mirror lays it out (the layout tests compare it with the SPIR-V's).
struct PushField {
  const char* name;
  size_t offset, size;
};

}  // namespace ts::vk

#define TS_PUSH_CXX_U(n) uint32_t n;
#define TS_PUSH_CXX_F(n) float n;
#define TS_PUSH_CXX_A(n, count) uint32_t n[count];
#define TS_PUSH_IN_U(n) int64_t n = 0;
#define TS_PUSH_IN_F(n) float n = 0;
#define TS_PUSH_IN_A(n, count) int64_t n[count] = {};
#define TS_PUSH_WORD_U(n) w.u(in.n);
#define TS_PUSH_WORD_F(n) w.f(in.n);
#define TS_PUSH_WORD_A(n, count) \
  for (int64_t v_ : in.n) w.u(v_);
// Declares Name, Name##In and push_words(const Name##In&) in ts::vk.
#define TS_PUSH_STRUCT(Name, LIST)                                      \
  namespace ts::vk {                                                    \
  struct Name {                                                         \
    LIST(TS_PUSH_CXX_U, TS_PUSH_CXX_F, TS_PUSH_CXX_A)                   \
  };                                                                    \
  struct Name##In {                                                     \
    LIST(TS_PUSH_IN_U, TS_PUSH_IN_F, TS_PUSH_IN_A)                      \
  };                                                                    \
  inline std::vector<uint32_t> push_words(const Name##In& in) {         \
    Push w;                                                             \
    LIST(TS_PUSH_WORD_U, TS_PUSH_WORD_F, TS_PUSH_WORD_A)                \
    return w.words();                                                   \
  }                                                                     \
  static_assert(sizeof(Name) % 4 == 0);                                 \
  }
