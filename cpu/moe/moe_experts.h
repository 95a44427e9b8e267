#pragma once
// The cpu's one expert-GEMV engine for the moe family. Every expert GEMV / GEMM op is an
// adapter that says, per (token, slot) pair, where its activation row starts in `a`, which expert it
// runs and which output row it writes (a Site); the engine does the rest once:
//   - each distinct activation row is widened (and, for the decode GEMV of GGUF experts, quantized to
//     int8) once, however many pairs read it (a broadcast row serves all top_k experts);
//   - pairs are grouped by expert and the work cut into (expert, block of weight rows) tasks, so each
//     selected expert's weights are streamed from memory once per call even when many pairs chose it;
//   - the dots are the quant family's own (cpu/quant/quant_rows.h), so an expert's outputs are gemm_quant's.
// Prefill (gemm_quant_moe_id) is the same engine: an expert's tens of pairs run 4 at a time against
// each task's block of its weight rows, read from memory once and from L2 after. (Decoding each
// expert to F32 panels for sgemm, as the dense prefill does, spent more on the decode and on tens of
// small sgemm calls than on the products: 3.9x slower at Qwen3-30B-A3B's 512 tokens.)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/metrics.h"
#include "core/ops/moe/pair_view.h"
#include "core/ops/moe_params.h"
#include "core/tensor.h"
#include "cpu/runtime/scratch.h"

namespace ts::cpu::moe {

// Stacked experts [num_experts, n_rows, n_cols]: GGUF block rows, or plain rows in the tensor's dtype.
struct Stack {
  Stack(const MoeExperts& w, const Tensor& t);
  bool quant() const;
  const std::byte* expert(int64_t e) const { return data + e * n_rows * row_bytes; }
  QuantKind kind;
  DType dtype;  // the tensor's: U8 for GGUF kinds
  int64_t n_rows, n_cols, row_bytes;
  const std::byte* data;
};

// Pair p reads a[a_at, a_at + n_cols) against expert `expert` into out[out_row, :]: the op's pair view
// (core/ops/moe/pair_view.h) gives them.
using ts::moe::Site;

// out[s.out_row, :] = a[s.a_at ..] . W[s.expert]^T for every site; with `up`, silu(that against
// w) * (that against up). Output rows no site names are left unspecified (the op does not compare them).
// In the thread's scratch pools (cpu/runtime/scratch.h): a call of the same shape as the last allocates nothing.
using Sites = ScratchVector<Site>;
void gemv(const Stack& w, const Stack* up, const Tensor& a, const Sites& sites, Tensor& out);

// gemv's own tolerance for `sites` of activations `a` (silu: the fused gate + up + SiLU), when it
// quantizes the activations to int8, from the rows the sites read; nullopt where it is exact (too few
// outputs, a non-finite activation) and the op's tolerance holds.
std::optional<Tolerance> gemv_tolerance(const MoeExperts& w, const Tensor& a, const Sites& sites, bool silu, DType out);

}  // namespace ts::cpu::moe
