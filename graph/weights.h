#pragma once
// What a program reads besides its state: its weights (names as a llama.cpp GGUF names them, so a
// checkpoint's tensors load unchanged), and the RoPE tables it derives from its parameters.
#include <string>
#include <vector>

#include "core/rng.h"
#include "graph/program.h"

namespace ts::graph {

struct WeightSpec {
  enum class Use { Embedding, Norm, Matrix };
  std::string name;
  Use use = Use::Matrix;
  DType dtype = DType::F32;
  Shape shape;          // as stored: [n, k] floats, or [n, row bytes] of GGUF blocks; [stack, ...] for experts
  int64_t n = 0, k = 0;  // a matrix's rows (outputs) and columns (inputs)
  int64_t stack = 1;     // experts stacked (qwen3_moe_decode's ffn_*_exps), else 1
};

// Every weight of the program with these parameters, in layer order.
std::vector<WeightSpec> program_weights(const std::string& program, const DecodeParams& p);

// Random weights of the right scale: matrices N(0, 1/k) (activations stay O(1) through the layers),
// quantized to the kind's blocks as llama.cpp's reference quantizer does; norms in [0.5, 1.5];
// the embedding N(0, 1).
TensorMap generate_weights(const std::string& program, const DecodeParams& p, Rng& r);

// cos / sin [max_pos, head_dim / 2] of the step's activation dtype: angle pos * rope_base^(-2i/head_dim),
// taken in double and rounded once.
struct RopeTables {
  Tensor cos, sin;
};
RopeTables rope_tables(const DecodeParams& p);

}  // namespace ts::graph
