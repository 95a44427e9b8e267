// kv_append_paged on OpenCL (kernels/kv_append.cl): each token's k and v rows quantized into the
// slots of its own positions.
#include <string>

#include "core/ops/kv/kv_quant.h"
#include "core/ops/paged_params.h"
#include "opencl/kernels/kv_append_args.h"
#include "opencl/plan.h"

namespace ts::ocl {
namespace {

// The build option that makes kernels/kv.h's kv_t and KST a pool of `k`: KV_ and its name.
std::string kv_dtype_define(KvDtype k) { return fmt::format("-DKV_{}", enum_name(k)); }

// One work-group per (side, token, kv head) row; the quantizer's division correctly rounded.
void kv_append(Planner& pl) {
  const auto& p = pl.params<KvAppendPagedParams>();
  const size_t g = pl.limits().cpu ? 1 : pl.reduction_group(p.head_dim, 128);
  const bool scaled = has_scales(p.kv_dtype);
  const cl_mem none = pl.buf("k_in");  // bound where an F16 / BF16 pool has no scales
  const std::string options =
      kv_dtype_define(p.kv_dtype) + " -cl-fp32-correctly-rounded-divide-sqrt";
  const KvAppendArgsIn args{.cache_len_before = p.cache_len_before, .nkv = p.num_kv_heads, .hd = p.head_dim,
                             .block_size = p.block_size};
  pl.dispatch(pl.kernel("kv_append.cl", "kv_append", options), {g, size_t(p.tokens * p.num_kv_heads), 2}, {g, 1, 1},
              pl.args(pack(args)), pl.buf("k_in"), pl.buf("v_in"), pl.buf("layer_k"), pl.buf("layer_v"),
              scaled ? pl.buf("layer_k_scales") : none, scaled ? pl.buf("layer_v_scales") : none,
              pl.buf("paged_block_indices"), LocalBytes{g * sizeof(float)});
}

}  // namespace

void add_kv_append_ops(PlanTable& t) {
  add_plan(t, ops::kv_append_paged, kv_append);
}

}  // namespace ts::ocl
