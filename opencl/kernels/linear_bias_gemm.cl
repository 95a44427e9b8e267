// linear_3d_bias, m > 8: gemm.cl's tiled kernel with bias[col] added to each F32 result before its
// one rounding.
#define B_ARGS , __global const st_t* bias
#define OUT_VALUE(col, v) ((v) + LD(bias, col))
#include "gemm.cl"
