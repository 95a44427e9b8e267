// The decode GEMV's int8 activations, one buffer of 32-bit words for a row of k values (k a multiple
// of 32): quantize_q8.comp writes it, gemv_quant_m1.comp's int8 variant (gemv_quant_q8) reads it, and
// vulkan/quant/quant_gemm.cpp sizes it. Read by GLSL and C++ alike.
//   words [0, k/4)                   the codes, four a word: value i in byte i % 4 of word i / 4
//   words [SCALES_AT, + k/32)        each block of 32 values' scale d = amax / 127 (float bits), its
//                                    codes round(value / d)
//   words [SUMS_AT, + k/16)          each run of 16 codes' sum (int bits)
//   word FLAG_AT                     1 where any value is not finite (the codes then mean nothing and
//                                    the GEMV takes the F32 route for the whole product), else 0
#ifndef TS_ACT_Q8_GLSL
#define TS_ACT_Q8_GLSL
#define TS_Q8_SCALES_AT(k) ((k) / 4u)
#define TS_Q8_SUMS_AT(k) ((k) / 4u + (k) / 32u)
#define TS_Q8_FLAG_AT(k) ((k) / 4u + (k) / 32u + (k) / 16u)
#define TS_Q8_WORDS(k) (TS_Q8_FLAG_AT(k) + 1u)
#endif
