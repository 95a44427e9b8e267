#pragma once
// The magnitudes a derived tolerance reads from a case's own data (core/op.h, DerivedTolerance): a
// bound on the terms an output sums is only a bound if it is this case's, whatever made the case (the
// generators, a GGUF or GPTQ checkpoint, a user's dumped tensors). Only finite elements count: NaN
// and Inf are matched element by element by the judge, and an output one of them reaches is not finite.
#include <string>

#include "core/kinds.h"
#include "core/tensor.h"

namespace ts::magnitude {

// Input `name` of a case, or an Error naming it.
const Tensor& input(const TensorMap& in, const std::string& name);

// The largest |x| over the finite elements of t, 0 when it has none.
double max_abs(const Tensor& t);
// Of input `name` of a case, or of every tensor of the list `name.0`, `name.1`, ... where the case
// holds a list of that name (an Error naming it when it has neither).
double max_abs(const TensorMap& in, const std::string& name);
// The largest |w| the GGUF rows of `bytes` (U8 [..., row_bytes], rows of n_cols values of kind k)
// decode to, through the kind's own dequantizer; finite values only.
double max_abs_gguf(const Tensor& bytes, QuantKind k, int64_t n_cols);
// The largest row norm sqrt(sum x^2) over the rows of `len` contiguous elements of t whose elements
// are all finite (0 when none); of input `name` (or list `name.i`) of a case.
double max_row_norm(const Tensor& t, int64_t len);
double max_row_norm(const TensorMap& in, const std::string& name, int64_t len);

// "1.2e+04": how a magnitude is printed in a derivation.
std::string str(double v);

}  // namespace ts::magnitude
