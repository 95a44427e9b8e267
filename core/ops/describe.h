#pragma once
// Small helpers for writing op descriptions (core/ops/<family>/<op>.cpp), so each description reads
// as data: tensors, checks, generator, presets, tolerance, cost.
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/checked.h"
#include "core/op.h"
#include "core/ops/magnitude.h"
#include "core/tolerance.h"

#include <fmt/format.h>

namespace ts::describe {

// Tensors in the case's activation dtype; pinned() fixes one's dtype (U8 quant bytes, U32 ids, F32
// scales), dtype_from() takes it from an enum parameter (a pool in `kv_dtype`).
inline TensorDecl in(std::string name, Shape s) { return {std::move(name), Role::In, DTypeRule::Activation, DType::F32, {}, std::move(s)}; }
inline TensorDecl out(std::string name, Shape s) { return {std::move(name), Role::Out, DTypeRule::Activation, DType::F32, {}, std::move(s)}; }
inline TensorDecl inout(std::string name, Shape s) { return {std::move(name), Role::InOut, DTypeRule::Activation, DType::F32, {}, std::move(s)}; }
inline TensorDecl pinned(TensorDecl d, DType t) {
  d.rule = DTypeRule::Pinned;
  d.dtype = t;
  return d;
}
// `param` is the enum field's name and `value` its value: "kv_dtype", KvDtype::I8 -> I8 storage.
template <NamedEnum E> TensorDecl dtype_from(TensorDecl d, const char* param, E value) {
  d.rule = DTypeRule::Param;
  d.dtype = storage_dtype(value);
  d.param = fmt::format("{}={}", param, enum_name(value));
  return d;
}

// A case or preset name that leads with its enum values, as kernel engineers name them:
// named({QuantKind::Q4_K}, "m1_n4096_k14336") -> "Q4_K_m1_n4096_k14336".
template <NamedEnum... E> std::string named(std::tuple<E...> values, std::string_view rest) {
  std::string s;
  std::apply([&](auto... v) { ((s += std::string(enum_name(v)) + "_"), ...); }, values);
  return s + std::string(rest);
}
template <NamedEnum E> std::string named(E value, std::string_view rest) { return named(std::tuple{value}, rest); }

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
// Integer tensors (I32, U32, I8, U8): uniform integers in [lo, hi]; random_bytes: every bit random.
void uniform_int(Tensor& x, Rng& r, int64_t lo, int64_t hi);
void random_bytes(Tensor& x, Rng& r);
// RoPE tables for positions [0, max_pos): cos/sin of p * theta^(-2i/rotary_dim), theta 10000.
void rope_tables(Tensor& cos, Tensor& sin, int64_t max_pos, int64_t half);

// Bytes of `n` elements of dtype dt, as doubles for cost models.
inline double bytes(DType dt, double n) { return n * static_cast<double>(dtype_size(dt)); }

}  // namespace ts::describe
