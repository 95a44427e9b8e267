// copy_slice: dst[dst_offset + i] = src[src_offset + i] for i < len; the rest of dst keeps its values.
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts {
using namespace describe;

namespace {
CopySliceParams slice(int64_t src_offset, int64_t dst_offset, int64_t len, int64_t src_len, int64_t dst_len) {
  return {src_offset, dst_offset, len, src_len, dst_len};
}
}  // namespace

const Op& op_copy_slice() {
  static const TypedOp<CopySliceParams> op({
      .name = "copy_slice",
      .family = "core",
      .summary = "dst[dst_offset + i] = src[src_offset + i], i < len",
      .tensors = [](const CopySliceParams& p) {
        return std::vector{in("src", {p.src_len}), inout("dst", {p.dst_len})};
      },
      .validate_params = [](const CopySliceParams& p) {
        non_negative(p.src_offset, "src_offset");
        non_negative(p.dst_offset, "dst_offset");
        positive(p.len, "len");
        check(checked::fits(p.src_offset, p.len, p.src_len),
              "copy_slice: src_offset {} + len {} runs past the end of src ({} elements)", p.src_offset, p.len,
              p.src_len);
        check(checked::fits(p.dst_offset, p.len, p.dst_len),
              "copy_slice: dst_offset {} + len {} runs past the end of dst ({} elements)", p.dst_offset, p.len,
              p.dst_len);
      },
      .infer = [](CopySliceParams& p, const TensorMap& t) {
        p.src_len = dim_of(t, "src", 1, 0);
        p.dst_len = dim_of(t, "dst", 1, 0);
      },
      .generate = [](const CopySliceParams&, TensorMap& t, Rng& r) { normal(t["src"], r); normal(t["dst"], r); },
      .tolerance = [](const CopySliceParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const CopySliceParams& p, DType dt) { return Cost{0, bytes(dt, 2.0 * p.len)}; },
      .cases = {
          {"len1", Tier::Smoke, slice(0, 0, 1, 1, 1)},
          {"s3_d5_len7_to_src_end", Tier::Smoke, slice(3, 5, 7, 10, 12)},
          {"s0_d33_len17", Tier::Ci, slice(0, 33, 17, 17, 50)},
          {"s100_d1_len257_to_dst_end", Tier::Ci, slice(100, 1, 257, 400, 258)},
          {"s7_d0_len1000", Tier::Ci, slice(7, 0, 1000, 1007, 2000)},
          {"s1_d2_len4097", Tier::Ci, slice(1, 2, 4097, 4100, 4100)},
          {"llama3_8b_row_d4096", Tier::Full, slice(4096, 8192, 4096, 3 * 4096, 3 * 4096)},
      },
      .benches = {
          {"len8388608", Tier::Full, slice(0, 0, 8388608, 8388608, 8388608)},  // 64 MB per call in F32
      },
  });
  return op;
}

}  // namespace ts
