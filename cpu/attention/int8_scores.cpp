// The query quantizer and the tolerance of the integer scoring route (cpu/attention/int8_scores.h); its kernel
// is cpu/attention/int8_scores_vnni.cpp.
#include "cpu/attention/int8_scores.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/ops/paged_params.h"
#include "core/tensor.h"

namespace ts::cpu {

// Written for the compiler to vectorise (it runs on the calling thread before the workers start, once
// per query row: a scalar nearbyint per element was 4% of a ctx1024 decode): max|q| in 8 partial
// maxima (q finite, so a plain compare-and-select is the maximum), and round half to even as
// (x + 1.5 * 2^23) - 1.5 * 2^23, exact for |x| <= 2^22 (here |x| <= 127, x = q / d), which the
// default rounding mode makes nearbyint's result.
float quantize_query(const float* q, int64_t n, int8_t* codes, int64_t padded) {
  float part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const float a = std::fabs(q[i + l]);
      part[l] = a > part[l] ? a : part[l];
    }
  float amax = 0;
  for (float a : part) amax = std::max(amax, a);
  for (; i < n; ++i) amax = std::max(amax, std::fabs(q[i]));
  const float d = amax / 127.0f;
  const float inv = amax > 0 ? 127.0f / amax : 0.0f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  for (i = 0; i < n; ++i) {
    const float r = (q[i] * inv + kRound) - kRound;
    codes[i] = static_cast<int8_t>(r < -127.0f ? -127.0f : (r > 127.0f ? 127.0f : r));
  }
  std::fill(codes + n, codes + padded, int8_t{0});
  return d;
}

namespace {

// Where kv_paged_decode_attention's I8 pool keeps position j of kv head h (ferrum layout: blocks of
// [num_kv_heads, block_size, head_dim] codes, one scale per slot).
struct PoolSlots {
  const KvPagedDecodeParams& p;
  const uint32_t* table;
  int64_t slot(int64_t h, int64_t j) const {
    return (static_cast<int64_t>(table[j / p.block_size]) * p.num_kv_heads + h) * p.block_size + j % p.block_size;
  }
};

}  // namespace

namespace {
// Whether any of x[0, n) is a NaN or an Inf (an all-ones exponent), as a branch-free OR the compiler
// vectorises: a decode's check costs microseconds.
bool any_non_finite(const float* x, int64_t n) {
  uint32_t top = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, sizeof(u));
    top |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
  }
  return top != 0;
}
}  // namespace

bool int8_route_queries(const KvPagedDecodeParams& p, const float* q) {
  return !any_non_finite(q, p.num_q_heads * p.head_dim);
}

bool int8_route_data(const KvPagedDecodeParams& p, const float* q, const TensorMap& t) {
  if (!int8_route_queries(p, q)) return false;
  // The scales block by block: a block's slots of one kv head lie together.
  const uint32_t* table = t.at("block_table").as<uint32_t>();
  const float* ks = t.at("layer_k_scales").as<float>();
  const float* vs = t.at("layer_v_scales").as<float>();
  for (int64_t j0 = 0; j0 < p.valid_kv_len; j0 += p.block_size) {
    const int64_t n = std::min(p.block_size, p.valid_kv_len - j0);
    for (int64_t h = 0; h < p.num_kv_heads; ++h) {
      const int64_t at = (static_cast<int64_t>(table[j0 / p.block_size]) * p.num_kv_heads + h) * p.block_size;
      if (any_non_finite(ks + at, n) || any_non_finite(vs + at, n)) return false;
    }
  }
  return true;
}

// The int8 route's error, derived (docs/catalog.md, family kv, repeats it).
//
// The route changes one thing: query row q is replaced by d c (c = its int8 codes, d = max|q| / 127),
// off by e = d c - q with |e_i| <= d / 2. The keys are not approximated (the integer dot of the pool's
// codes is exact, and each score is scale x d x key scale x that dot, a few F32 roundings), so the
// output is the exact attention of a slightly moved query. Its scores move by ds_j = scale e . K_j
// (K_j the key row dequantized), and to first order the output moves by
//   do = sum_j p_j ds_j (v_j - o) = scale G^T e,   G = sum_j p_j K_j (v_j - o)^T   (head_dim x head_dim),
// p the softmax weights and o the output, both read from this case's data (exactly the reference's).
// Rounding errors modelled as independent and uniform on [-d/2, d/2] (variance s2 = d^2 / 12), as the
// GGUF route models its activations', give E|do|^2 = scale^2 s2 |G|_F^2 per query row; the expected
// NMSE of the output is the sum M of that over the rows over the sum of |o|^2.
// The measured value is one draw of a sum of quadratic forms e^T A e (A = scale^2 G G^T per row), a
// weighted sum of squares with eigenvalues l_k summing to M; a uniform error is strictly sub-Gaussian
// (its moment generating function is below the normal one of the same variance), so the Gaussian tail
// of Laurent and Massart holds: above M + 2 sqrt(S x) + 2 max l_k x with a chance below e^-x, S = sum
// l_k^2 = sum scale^4 s2^2 |G G^T|_F^2. With max l_k <= sqrt(S), x = ln 10^6 and nu = M^2 / S (the
// degrees of freedom of the rows' G matrices, read from the data: about 1 when one key pair
// dominates a row's softmax, up to head_dim x rows), the bound is M (1 + (2 sqrt(x) + 2 x) / sqrt(nu)):
// 36 M at nu = 1, 7 M at nu = 32. Second order: the softmax weights move by a factor within
// exp(+-2 D), D the largest score shift, so the output's error is within exp(2 D) of its first-order
// term (x exp(4 D) on the NMSE); each ds_j is sub-Gaussian of variance scale^2 s2 |K_j|^2, so
// D = |scale| max sqrt(s2) max |K_j| sqrt(2 ln(2 keys rows 10^6)) with the same confidence. The
// exact route's own F32 error ((8 sqrt(keys) + 4) u32 of the output, relative) and the output's
// rounding (2 u_out) are added as NMSE terms.
std::optional<Tolerance> int8_score_tolerance(const Problem& pr, const TensorMap& in) {
  const auto& p = pr.params.as<KvPagedDecodeParams>();
  if (!int8_scores(storage_dtype(p.kv_dtype), p.valid_kv_len, p.head_dim)) return std::nullopt;
  const int64_t hd = p.head_dim, L = p.valid_kv_len, group = p.num_q_heads / p.num_kv_heads;
  const Tensor& qt = in.at("q");
  std::vector<float> q(static_cast<size_t>(qt.numel()));
  for (int64_t i = 0; i < qt.numel(); ++i) q[static_cast<size_t>(i)] = static_cast<float>(qt.get(i));
  if (!int8_route_data(p, q.data(), in)) return std::nullopt;
  const int8_t* kc = in.at("layer_k").as<int8_t>();
  const int8_t* vc = in.at("layer_v").as<int8_t>();
  const float* ks = in.at("layer_k_scales").as<float>();
  const float* vs = in.at("layer_v_scales").as<float>();
  const PoolSlots pool{p, in.at("block_table").as<uint32_t>()};
  const double scale = p.scale;
  const auto u = static_cast<size_t>(hd);
  std::vector<double> K(static_cast<size_t>(L) * u), V(static_cast<size_t>(L) * u), l2(static_cast<size_t>(L));
  std::vector<double> s(static_cast<size_t>(L)), o(u), G(u * u), GGt(u * u);
  std::vector<float> qf(u);
  std::vector<int8_t> codes(u);
  double mean = 0, spread = 0, energy = 0, kmax = 0, smax = 0;
  for (int64_t kh = 0; kh < p.num_kv_heads; ++kh) {
    for (int64_t j = 0; j < L; ++j) {
      const int64_t slot = pool.slot(kh, j);
      double a = 0;
      for (int64_t i = 0; i < hd; ++i) {
        K[j * hd + i] = ks[slot] * static_cast<double>(kc[slot * hd + i]);
        V[j * hd + i] = vs[slot] * static_cast<double>(vc[slot * hd + i]);
        a += K[j * hd + i] * K[j * hd + i];
      }
      l2[j] = std::sqrt(a);
    }
    for (int64_t h = kh * group; h < (kh + 1) * group; ++h) {
      std::copy(q.begin() + h * hd, q.begin() + (h + 1) * hd, qf.begin());
      const double d = quantize_query(qf.data(), hd, codes.data(), hd);
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < L; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < hd; ++i) dot += qf[i] * K[j * hd + i];
        s[j] = scale * dot;
        m = std::max(m, s[j]);
        kmax = std::max(kmax, l2[j]);
      }
      double z = 0;
      for (int64_t j = 0; j < L; ++j) z += (s[j] = std::exp(s[j] - m));
      std::fill(o.begin(), o.end(), 0.0);
      for (int64_t j = 0; j < L; ++j) {
        s[j] /= z;
        for (int64_t c = 0; c < hd; ++c) o[c] += s[j] * V[j * hd + c];
      }
      std::fill(G.begin(), G.end(), 0.0);
      for (int64_t j = 0; j < L; ++j)
        for (int64_t r = 0; r < hd; ++r) {
          const double pk = s[j] * K[j * hd + r];
          double* g = G.data() + r * hd;
          for (int64_t c = 0; c < hd; ++c) g[c] += pk * (V[j * hd + c] - o[c]);
        }
      double g2 = 0, gg2 = 0;
      for (double x : G) g2 += x * x;
      for (int64_t a = 0; a < hd; ++a)
        for (int64_t b = 0; b <= a; ++b) {
          double x = 0;
          for (int64_t c = 0; c < hd; ++c) x += G[a * hd + c] * G[b * hd + c];
          gg2 += (a == b ? 1 : 2) * x * x;
        }
      const double var = d * d / 12;
      smax = std::max(smax, std::sqrt(var));
      mean += scale * scale * var * g2;
      spread += std::pow(scale, 4) * var * var * gg2;
      for (double x : o) energy += x * x;
    }
  }
  const double x = std::log(1e6), rows = static_cast<double>(p.num_q_heads);
  const double nu = spread > 0 ? mean * mean / spread : std::numeric_limits<double>::infinity();
  const double factor = 1 + (2 * std::sqrt(x) + 2 * x) / std::sqrt(nu);
  const double D = std::fabs(scale) * smax * kmax * std::sqrt(2 * std::log(2 * static_cast<double>(L) * rows * 1e6));
  const double expected = energy > 0 ? mean / energy : 0.0;
  const double u32 = 0x1p-24, uo = unit_roundoff(pr.dtype);
  const double f32 = (8 * std::sqrt(static_cast<double>(L)) + 4) * u32;
  const double bound = factor * expected * std::exp(4 * D) + f32 * f32 + 4 * uo * uo;
  return Tolerance{
      .why = fmt::format("I8 keys scored in int8, each query row quantized to int8 (d = max|q|/127, error "
                         "U(+-d/2), variance d^2/12): first-order output error scale G^T e, G = sum_j p_j K_j "
                         "(v_j - o)^T from this case's data, expected NMSE M = sum scale^2 d^2/12 |G|_F^2 / sum |o|^2 "
                         "= {:.3g}; x(1 + 35.0/sqrt(nu)) = x{:.3g} for one draw (nu = {:.3g} degrees of freedom, "
                         "sub-Gaussian tail at 1e-6), x exp(4 D) for second order (score shift D = {:.3g} at 1e-6), "
                         "+ F32 and output rounding",
                         expected, factor, nu, D),
      .metric = Metric::Nmse,
      .max_nmse = bound};
}

}  // namespace ts::cpu
