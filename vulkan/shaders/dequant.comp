#version 450
#extension GL_GOOGLE_include_directive : require
// dequantize: out[r, :] = the values of GGUF row r, bit-exact with ggml. One invocation per chunk of
// 16 values (quant.glsl), grid-stride over all chunks of all rows. The output is F32 in every variant.
layout(local_size_x = 128, local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0;

layout(std430, binding = 0) readonly buffer Buf0 { uint w[]; };
layout(std430, binding = 1) writeonly buffer Buf1 { float o[]; };
// skip: bytes before the first row in the bound window (which starts at an aligned offset).
layout(push_constant) uniform Push { uint rows, cols, skip; } p;

#define QUANT_BUF w
#include "quant.glsl"

void main() {
  const uint chunks = p.cols / 16u, row_bytes = quant_row_bytes(KIND, p.cols);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint e = gl_GlobalInvocationID.x; e < p.rows * chunks; e += stride) {
    const uint r = e / chunks, c = e % chunks;
    float v[16];
    quant_decode16(KIND, p.skip + r * row_bytes, c, v);
    for (uint j = 0u; j < 16u; ++j) o[r * p.cols + c * 16u + j] = v[j];
  }
}
