// The norms' reference against an independent implementation in Eigen, on the ops' own generated
// inputs (rows of scale 1, 1e4 and 1e-3). Eigen in double must agree to the last F32 bit (up to the
// final rounding); Eigen in F32 (its own vectorised reductions) must pass the op's derived tolerance;
// and a classic mistake (eps outside the square root, unbiased variance) must not.
#include <cmath>
#include <functional>
#include <string>

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include "core/metrics.h"
#include "core/op.h"
#include "core/ops/core_params.h"
#include "reference/kernels.h"

namespace ts {
namespace {

template <class T> using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T> using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

template <class T> RowMat<T> as_matrix(const Tensor& t, int64_t rows, int64_t cols) {
  RowMat<T> m(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i) m.data()[i] = static_cast<T>(t.get(i));
  return m;
}
template <class T> Vec<T> as_vector(const Tensor& t) { return as_matrix<T>(t, t.numel(), 1); }

template <class T> Tensor to_tensor(const RowMat<T>& m) {
  Tensor t(DType::F32, {m.rows(), m.cols()});
  for (int64_t i = 0; i < m.size(); ++i) t.set(i, static_cast<double>(m.data()[i]));
  return t;
}

template <class T> RowMat<T> eigen_rms_norm(const RowMat<T>& x, const Vec<T>& w, T eps, bool eps_outside = false) {
  const Vec<T> ms = x.array().square().rowwise().mean();
  const Vec<T> denom = eps_outside ? Vec<T>(ms.array().sqrt() + eps) : Vec<T>((ms.array() + eps).sqrt());
  return ((x.array().colwise() / denom.array()).rowwise() * w.transpose().array()).matrix();
}

template <class T>
RowMat<T> eigen_layer_norm(const RowMat<T>& x, const Vec<T>& gamma, const Vec<T>& beta, T eps, bool unbiased = false) {
  const Vec<T> mean = x.rowwise().mean();
  const RowMat<T> centered = x.colwise() - mean;
  const T n = static_cast<T>(unbiased ? x.cols() - 1 : x.cols());
  const Vec<T> inv = ((centered.array().square().rowwise().sum() / n) + eps).rsqrt();
  return ((centered.array().colwise() * inv.array()).rowwise() * gamma.transpose().array()).rowwise() +
         beta.transpose().array();
}

struct Shape2 {
  int64_t tokens, dim;
};
const Shape2 kShapes[] = {{1, 1}, {3, 7}, {6, 257}, {3, 1000}, {4, 4096}, {3, 4097}};

// Inputs from the op's generator, expected output from the reference (F32 case).
TensorMap reference_case(const Op& op, const Params& p, const std::string& tag) {
  TensorMap t = op.make_case(p, DType::F32, stable_hash(op.name() + tag));
  ref::run(op, p, t);
  return t;
}

// Eigen in double vs the reference: the same real numbers, so at most one F32 ulp from double rounding.
void expect_same_to_the_f32_ulp(const Tensor& want, const RowMat<double>& got, const std::string& what) {
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.data()[i], w = want.get(i);
    ASSERT_LE(std::fabs(g - w), 0x1p-23 * std::fabs(g) + 1e-300) << what << " element " << i;
  }
}

TEST(NormsCrossCheck, RmsNormMatchesEigen) {
  const Op& op = op_or_throw("rms_norm");
  for (const auto& s : kShapes) {
    const std::string tag = fmt::format("t{}_d{}", s.tokens, s.dim);
    const Params p = Params::of(RmsNormParams{s.tokens, s.dim, 1e-6f});
    const TensorMap t = reference_case(op, p, tag);
    const Tolerance tol = op.tolerance(p, DType::F32, t);

    expect_same_to_the_f32_ulp(t.at("out"),
                               eigen_rms_norm<double>(as_matrix<double>(t.at("x"), s.tokens, s.dim),
                                                      as_vector<double>(t.at("w")), double(1e-6f)),
                               "rms_norm double " + tag);

    const RowMat<float> x = as_matrix<float>(t.at("x"), s.tokens, s.dim);
    const Vec<float> w = as_vector<float>(t.at("w"));
    const ErrorReport f32 = compare(t.at("out"), to_tensor(eigen_rms_norm<float>(x, w, 1e-6f)), tol);
    EXPECT_TRUE(f32.pass()) << "rms_norm F32 " << tag << ": " << f32.summary() << " (" << tol.why << ")";
    if (s.tokens >= 3) {  // row 2 is the tiny one, where eps matters
      const ErrorReport wrong = compare(t.at("out"), to_tensor(eigen_rms_norm<float>(x, w, 1e-6f, true)), tol);
      EXPECT_FALSE(wrong.pass()) << "eps outside the sqrt passed on " << tag;
    }
  }
}

TEST(NormsCrossCheck, LayerNormMatchesEigen) {
  const Op& op = op_or_throw("layer_norm");
  for (const auto& s : kShapes) {
    const std::string tag = fmt::format("t{}_d{}", s.tokens, s.dim);
    const Params p = Params::of(LayerNormParams{{s.tokens, s.dim, 1e-5f}});
    const TensorMap t = reference_case(op, p, tag);
    const Tolerance tol = op.tolerance(p, DType::F32, t);

    expect_same_to_the_f32_ulp(
        t.at("out"),
        eigen_layer_norm<double>(as_matrix<double>(t.at("x"), s.tokens, s.dim), as_vector<double>(t.at("gamma")),
                                 as_vector<double>(t.at("beta")), double(1e-5f)),
        "layer_norm double " + tag);

    const RowMat<float> x = as_matrix<float>(t.at("x"), s.tokens, s.dim);
    const Vec<float> g = as_vector<float>(t.at("gamma")), b = as_vector<float>(t.at("beta"));
    const ErrorReport f32 = compare(t.at("out"), to_tensor(eigen_layer_norm<float>(x, g, b, 1e-5f)), tol);
    EXPECT_TRUE(f32.pass()) << "layer_norm F32 " << tag << ": " << f32.summary() << " (" << tol.why << ")";
    if (s.dim >= 7) {  // the unbiased variance differs by a factor dim / (dim - 1)
      const ErrorReport wrong = compare(t.at("out"), to_tensor(eigen_layer_norm<float>(x, g, b, 1e-5f, true)), tol);
      EXPECT_FALSE(wrong.pass()) << "unbiased variance passed on " << tag;
    }
  }
}

}  // namespace
}  // namespace ts
