// Unsigned codes as exact floats with no integer-to-float conversion (a quarter-rate instruction on
// NVIDIA GPUs): 2^23 + q in a float's bits is exactly 2^23 + q for q below 2^23, so one subtraction
// gives q - bias exactly for an integer bias (a quant's zero point or offset).
float fq(uint q, float bias) { return uintBitsToFloat(0x4B000000u | q) - (8388608.0 + bias); }
