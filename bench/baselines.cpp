#include "bench/baselines.h"

namespace ts::bench {

void register_baselines() {
  register_stream_triad();
  register_stream_read();
  register_fma_peak();
  register_device_roofs();
#if TOUCHSTONE_BENCH_CBLAS
  register_cblas_sgemm();
#endif
#if TOUCHSTONE_BENCH_CLBLAST
  register_clblast_sgemm();
#endif
}

}  // namespace ts::bench
