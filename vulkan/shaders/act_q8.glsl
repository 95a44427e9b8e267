// The decode GEMV's int8 activations, one buffer of 32-bit words for a row of k values (k a multiple
// of 32): quantize_q8.comp writes it, gemv_quant_m1.comp's int8 variant (gemv_quant_q8) reads it, and
// vulkan/quant/quant_gemm.cpp sizes it. Read by GLSL and C++ alike.
//   words [0, k/4)                   the codes, four a word: value i in byte i % 4 of word i / 4
//   words [SCALES_AT, + k/32)        each block of 32 values' scale d = amax / 127 (float bits), its
//                                    codes round(value / d)
//   words [SUMS_AT, + k/16)          each run of 16 codes' sum (int bits)
//   words [FLAGS_AT, + groups)       one a quantizer work group (TS_Q8_GROUP values each): 1 where a
//                                    value of its share is not finite, else 0. Any 1 and the codes
//                                    mean nothing: the GEMV takes the F32 route for the whole product
#ifndef TS_ACT_Q8_GLSL
#define TS_ACT_Q8_GLSL
#define TS_Q8_SCALES_AT(k) ((k) / 4u)
#define TS_Q8_SUMS_AT(k) ((k) / 4u + (k) / 32u)
#define TS_Q8_GROUP 1024u  // values a quantizer work group takes (256 invocations, a word each)
#define TS_Q8_GROUPS(k) (((k) + TS_Q8_GROUP - 1u) / TS_Q8_GROUP)
#define TS_Q8_FLAGS_AT(k) ((k) / 4u + (k) / 32u + (k) / 16u)
#define TS_Q8_WORDS(k) (TS_Q8_FLAGS_AT(k) + TS_Q8_GROUPS(k))
#endif
