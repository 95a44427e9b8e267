// linear_3d_bias, m <= 8: gemv.cl's kernel with bias[j] added to each F32 sum before its one rounding.
#define GEMV_ARGS , __global const st_t* bias
#define OUT_VALUE(j, v) ((v) + LD(bias, j))
#include "gemv.cl"
