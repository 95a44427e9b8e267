#include "bench/baselines.h"

namespace ts::bench {

std::vector<std::string> register_baselines(const Options& o) {
  register_stream_triad();
  register_stream_read();
  std::vector<std::string> capped = register_paged_read(o);
  register_fma_peak();
  register_device_roofs();
#if TOUCHSTONE_BENCH_CBLAS
  register_cblas_sgemm();
#endif
#if TOUCHSTONE_BENCH_CLBLAST
  register_clblast_sgemm();
#endif
  return capped;
}

}  // namespace ts::bench
