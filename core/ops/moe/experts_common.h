#pragma once
// What the moe family's expert GEMV / GEMM descriptions share: the stacked-experts weight tensor
// (GGUF bytes or plain weights in the case dtype) with its checks and generator, the expert-id checks
// and generators (a skewed router: a few hot experts, many with no pair), the activation-window
// checks of flat buffers, and the tolerances and costs.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/op.h"
#include "core/ops/moe_params.h"

namespace ts::moe_experts {

// The weights tensor `name` of the stack: U8 [E, n_rows, row_bytes] for a GGUF kind, [E, n_rows,
// n_cols] in the kind's dtype for a plain one.
TensorDecl weights(const std::string& name, const MoeExperts& w);

// num_experts, n_rows positive; n_cols a positive multiple of the kind's block (any positive count
// for plain kinds).
void check(const MoeExperts& w);

// An infer-time check that tensor `name` (if present and 3-D) holds rows of the byte count `kind`
// implies for n_cols values, saying why.
void check_weight_bytes(const TensorMap& t, const std::string& name, const MoeExperts& w);

// Plain kinds are the case dtype: an Error unless `kind` is a GGUF kind or the dtype of tensor `a`.
void check_plain_kind(const MoeExperts& w, const TensorMap& t);

// Every I32 of ids[begin, begin + count) in [0, num_experts): an Error naming the slot otherwise.
void check_expert_ids(const TensorMap& t, const char* name, int64_t begin, int64_t count, int64_t num_experts);

// top_k distinct experts per token: at most num_experts.
void check_top_k(int64_t top_k, int64_t num_experts);

// A stride is 0 (every pair reads the same row) or at least n_cols (rows do not overlap).
void check_stride(int64_t stride, int64_t n_cols, const char* name);

// Fills weights tensor `name` (GGUF rows as quant_gemm::gguf_weight writes them, plain ones N(0, 1)).
void fill_weights(const MoeExperts& w, Tensor& weights, Rng& r);

// Expert ids of m tokens x top_k slots into ids (I32, m * top_k values): distinct within a token
// (top_k <= num_experts), drawn by a skewed router: half the picks go to experts 0 and 1 when free,
// so a few experts take many pairs and, with many experts, most take none. The first slot of token 0
// is the last expert, so both ends of the range are read.
void route(int64_t m, int64_t top_k, int64_t num_experts, int32_t* ids, Rng& r);

// n expert ids of one GEMV op into ids: one token's n distinct picks when n <= num_experts, else n
// independent picks (repeats: many pairs on one expert); routed_experts is how many distinct ones
// a uniform router reaches.
void route_pairs(int64_t n, int64_t num_experts, int32_t* ids, Rng& r);
double routed_experts(int64_t n, int64_t num_experts);

// The expected number of distinct experts m tokens of top_k distinct picks reach under a uniform
// router, for cost models ("bytes counted over the selected experts' weights").
double selected_experts(int64_t num_experts, int64_t top_k, int64_t m);

// The length of a flat activation buffer whose last pair row starts at last_start.
inline int64_t a_length(int64_t last_start, int64_t n_cols) { return last_start + n_cols; }

// The bytes of one expert's weights.
double expert_bytes(const MoeExperts& w, DType dt);

// The largest |w| of stack `name` of the case: GGUF bytes decoded by their kind, plain weights as stored.
double weights_max_abs(const MoeExperts& w, const TensorMap& in, const std::string& name);
// A GEMV / GEMM output: quant_gemm's dot product of n_cols terms rounded once, its terms bounded by
// the case's max|a| x max|dequantized weights|.
Tolerance dot(DType out, const MoeExperts& w, const TensorMap& in);
// silu(gate) * up of two such dot products, unrounded in between: each factor's accumulation error
// scaled by the other factor's size (sqrt(n_cols) x its largest term, from the case's a, gate_w and
// up_w; silu' <= 1.1), then the silu and product's few F32 ops and one output rounding.
Tolerance silu_product(DType out, const MoeExperts& w, const TensorMap& in);

// 2 pairs n_rows n_cols flops per stack; bytes: the selected experts' weights, the activations
// read (a_rows rows of n_cols) and the outputs (pairs x n_rows).
Cost cost(const MoeExperts& w, DType dt, int64_t stacks, double experts, int64_t pairs, int64_t a_rows);

// What gemv_quant_moe_id_batched and gemv_quant_moe_id_gate_up_silu_batched share: the checks of
// their own fields (m, top_k, strides 0 or at least n_cols; the window is the pair view's), the cases (gate / up: outer n_cols,
// inner 0; down: outer top_k x n_cols, inner n_cols; strides past n_cols) and the decode presets (16
// tokens, gate / up shape).
void check_batched(const GemvQuantMoeIdBatchedParams& p);
std::vector<Preset<GemvQuantMoeIdBatchedParams>> batched_cases();
std::vector<Preset<GemvQuantMoeIdBatchedParams>> batched_benches();

// gemm_quant_moe_id and gemm_quant_moe_id_indirect: one description (the dispatch grid a backend
// derives from tpe is not part of the case), defined in gemm_quant_moe_id.cpp.
OpDef<GemmQuantMoeIdParams> gemm_def(std::string name, std::string summary);

// The benchmarks' model presets: Mixtral 8x7B, Qwen3-30B-A3B, DeepSeek-V2-Lite.
struct Model {
  const char* name;
  int64_t experts, top_k, hidden, ffn;
};
const std::vector<Model>& models();
// The benchmarks' (model, expert kind) pairs: every model in Q4_K and F16, but for Mixtral's F16
// stack (too large for a preset); the case dtype each kind runs in, and a preset name
// "<model>_<kind>_<rest>".
const std::vector<std::pair<Model, QuantKind>>& bench_models();
std::vector<DType> bench_dtypes(QuantKind k);
std::string bench_name(const Model& m, QuantKind k, const char* rest);

}  // namespace ts::moe_experts
