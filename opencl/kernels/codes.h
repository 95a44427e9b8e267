// Unsigned codes as exact floats with no integer-to-float conversion (a quarter-rate instruction on
// NVIDIA GPUs): 2^23 + q in a float's bits is exactly 2^23 + q for q below 2^23, so one subtraction
// gives q - bias exactly for an integer bias (a quant's zero point or offset).
inline float fq(uint q, float bias) { return as_float(0x4B000000u | q) - (8388608.0f + bias); }
inline float8 fq8(uint8 q, float8 bias) { return as_float8((uint8)(0x4B000000u) | q) - ((float8)(8388608.0f) + bias); }
