#pragma once
// Small helpers for writing op descriptions (core/ops/<family>/<op>.cpp), so each description reads
// as data: tensors, checks, generator, presets, tolerance, cost.
#include <string>
#include <vector>

#include "core/checked.h"
#include "core/op.h"
#include "core/tolerance.h"

namespace ts::describe {

inline TensorDecl in(std::string name, Shape s) { return {std::move(name), Role::In, std::nullopt, std::move(s)}; }
inline TensorDecl out(std::string name, Shape s) { return {std::move(name), Role::Out, std::nullopt, std::move(s)}; }
inline TensorDecl inout(std::string name, Shape s) { return {std::move(name), Role::InOut, std::nullopt, std::move(s)}; }
inline TensorDecl pinned(TensorDecl d, DType t) { d.pinned = t; return d; }

// Parameter checks that produce the one-line errors the CLI prints.
inline void positive(int64_t v, const char* name) { check(v > 0, "parameter '{}' must be positive, is {}", name, v); }
inline void non_negative(int64_t v, const char* name) {
  check(v >= 0, "parameter '{}' must not be negative, is {}", name, v);
}
inline void multiple_of(int64_t v, int64_t of, const char* what) {
  check(of > 0 && v % of == 0, "{}: {} is not a multiple of {}", what, v, of);
}
// Dimension `dim` of tensor `name`, checking its rank: used by infer() hooks.
int64_t dim_of(const TensorMap& t, const std::string& name, size_t rank, size_t dim);

// Generators. Activations are N(0, sigma); the same stream on every machine.
void normal(Tensor& x, Rng& r, double sigma = 1.0);
void uniform(Tensor& x, Rng& r, double lo, double hi);
void poison_nan(Tensor& x, int64_t begin, int64_t end);  // elements [begin, end) := NaN
// RoPE tables for positions [0, max_pos): cos/sin of p * theta^(-2i/rotary_dim), theta 10000.
void rope_tables(Tensor& cos, Tensor& sin, int64_t max_pos, int64_t half);

// Bytes of `n` elements of dtype dt, as doubles for cost models.
inline double bytes(DType dt, double n) { return n * static_cast<double>(dtype_size(dt)); }

}  // namespace ts::describe
