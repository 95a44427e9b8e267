// Storage dtype of a variant (-DDT_F32 / -DDT_F16 / -DDT_BF16): ELEM is the element type in
// buffers, ld(x) widens an element to float, st(f) rounds a float into one (BF16: round to nearest
// even). Macros, as 16-bit types may appear only in buffers without the 16-bit arithmetic features.
// Arithmetic is always in float.
#if defined(DT_F16) || defined(DT_BF16)
#extension GL_EXT_shader_16bit_storage : require
#endif

// BF16 bits of f, to nearest even (every variant: KV pools hold BF16 whatever the activations).
uint bf16_bits(float f) {
  uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;  // NaN stays a quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return u >> 16;
}

#if defined(DT_F32)
#define ELEM float
#define ld(v) (v)
#define st(f) (f)
#elif defined(DT_F16)
#define ELEM float16_t
#define ld(v) float(v)
#define st(f) float16_t(f)
#elif defined(DT_BF16)
#define ELEM uint16_t
#define ld(v) uintBitsToFloat(uint(v) << 16)
#define st(f) uint16_t(bf16_bits(f))
#else
#error "define DT_F32, DT_F16 or DT_BF16"
#endif

// Storage buffers of the variant's dtype (or uint for index tensors), one per binding.
#define BUF_IN(b, name) layout(std430, binding = b) readonly buffer Buf##b { ELEM name[]; };
#define BUF_OUT(b, name) layout(std430, binding = b) writeonly buffer Buf##b { ELEM name[]; };
#define BUF_INOUT(b, name) layout(std430, binding = b) buffer Buf##b { ELEM name[]; };
#define BUF_IDX(b, name) layout(std430, binding = b) readonly buffer Buf##b { uint name[]; };
#define BUF_IDX_OUT(b, name) layout(std430, binding = b) writeonly buffer Buf##b { uint name[]; };
