// An engine's push-constant block, declared once by a field list that the shader (here) and its C++
// mirror (vulkan/runtime/push_block.h) both expand, so neither restates the other's order. A list is a macro
// LIST(U, F, A) naming each field once: U(name) a uint, F(name) a float, A(name, count) a uint array.
// Only 4-byte members: std430 (a push block's layout) places member i at 4 x its index, as C++ does;
// tests/vulkan_push_test.cpp reads each member's offset from the SPIR-V and compares it with the
// mirror's.
#ifndef TS_PUSH_GLSL
#define TS_PUSH_GLSL
#define TS_PUSH_GLSL_U(n) uint n;
#define TS_PUSH_GLSL_F(n) float n;
#define TS_PUSH_GLSL_A(n, count) uint n[count];
#define TS_PUSH_BLOCK(LIST) \
  layout(push_constant) uniform Push { LIST(TS_PUSH_GLSL_U, TS_PUSH_GLSL_F, TS_PUSH_GLSL_A) } p;
#endif
