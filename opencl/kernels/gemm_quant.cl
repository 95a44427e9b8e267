// gemm_quant (prefill): the tiled GEMM of kernels/gemm.cl with the weight's k slab decoded from its
// GGUF blocks into local memory (kernels/quant_slab.h).
//   the gemm.cl options, -DDQ32 -DQBE -DQBB
#include "quant_slab.h"
#include "gemm.cl"
