#pragma once
// One quantized linear layer of a GPTQ or AWQ checkpoint (a safetensors file as AutoGPTQ or AutoAWQ
// writes it): its tensors `<prefix>.qweight`, `.qzeros`, `.scales` and GPTQ's `.g_idx`, recognised by
// their shapes alone, as the case of gemm_gptq or gemm_awq that runs the layer:
//   GPTQ: qweight [k*bits/32, n], scales [G, n], qzeros [G, n*bits/32]: bits = 32 * qzeros cols / n,
//         k = qweight rows * 32 / bits, group_size = k / G; act-order when g_idx is not k / group_size
//         (AutoGPTQ ships g_idx either way).
//   AWQ:  qweight [k, n/8], scales [G, n], qzeros [G, n/8]: 4 bits, group_size = k / G.
#include <string>

#include "core/op.h"
#include "core/safetensors.h"

namespace ts::quant {

struct CheckpointLayer {
  const Op* op = nullptr;  // gemm_gptq or gemm_awq
  Params params;           // with m as given
  TensorMap tensors;       // the layer's tensors under the op's names, bytes unchanged
};

// The layer `prefix` of checkpoint `f` (its tensors read already), or a one-line Error naming the
// tensor and what was expected.
CheckpointLayer checkpoint_layer(const SafetensorsFile& f, const std::string& prefix, int64_t m);

// Whether a checkpoint tensor's name belongs to the layer `prefix` (what to read of a large file).
bool in_layer(const std::string& name, const std::string& prefix);

}  // namespace ts::quant
