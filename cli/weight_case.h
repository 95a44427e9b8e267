#pragma once
// A case made of a real checkpoint's weights: what `gguf case` and `checkpoint case` share. The op's
// generator allocates every tensor; `fill_weights` puts the file's bytes, unchanged, into the weight
// inputs; every activation input is N(0, 1) from the seed; the case is validated as any case file is
// and the reference writes expected.*, so the file is a golden made of the checkpoint's own bytes.
#include <cstdint>
#include <functional>
#include <string>

#include "core/op.h"

namespace ts::cli {

void write_weight_case(const std::string& out, const Problem& pr, uint64_t seed,
                       const std::function<void(TensorMap&)>& fill_weights);

// --seed, or a stable hash of `what` (op and tensor) so the same command writes the same file.
uint64_t seed_flag(const std::optional<std::string>& flag, const std::string& what);

// --dtype of the activations: F32 (the default), F16 or BF16.
DType activation_dtype_flag(const std::optional<std::string>& flag);

}  // namespace ts::cli
