// gemm_gptq and gemm_awq: W[k, j] = s[g, j] * (q[k, j] - z[g, j]), g the group of row k (g_idx with
// act-order). A decode with enough outputs for the int8 bound (int8_gemv) repacks the weights once at
// prepare and runs the integer GEMV of cpu/quant/gptq_tiles.h. Every other call runs here, on the
// checkpoint's tensors as they are, exactly in F32:
// - the GEMV of a few outputs: both formats pack the codes of a row k of W across its columns' words,
//   so it vectorizes across columns: a chunk of columns is walked down k, the codes of a run of rows
//   of one group summed against the activations in registers and scaled once per run:
//     sum_k a_k s_g (q_kj - z_gj) = s_gj * (sum_k a_k q_kj - z_gj * sum_k a_k)   (k in the run).
//   Without act-order a run is a whole group; with it, rows of one group are scattered and runs are
//   short, which costs a flush per run but gives the same sums. The scales and zeros are widened to
//   F32 once per call (G x n values, a small fraction of the weights).
// - prefill (and activations that are not finite): a panel of rows of W decoded to F32 at a time and
//   handed to OpenBLAS's sgemm, accumulating over panels.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/quant/quant_gptq.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cstdint>

#include "hwy/highway.h"

#ifndef TS_CPU_QUANT_GPTQ_TYPES_
#define TS_CPU_QUANT_GPTQ_TYPES_
namespace ts::cpu {
// Where a call's packed codes are: AutoGPTQ's qweight [k * bits / 32, n], or AutoAWQ's [k, n / 8].
struct GptqLayout {
  const uint32_t* qweight;
  int64_t n;
  int bits;
};
struct AwqLayout {
  const uint32_t* qweight;
  int64_t n;
};
struct GroupedWeights {
  const int32_t* group;  // group of each row k
  const float* scale;    // [G, n] F32
  const float* zero;     // [G, n] F32
  int64_t k, n;
  int64_t groups = 0;    // G
};
}  // namespace ts::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 8 lanes: an AWQ word holds 8 columns, so a vector's columns come from one word.
using DP = hn::CappedTag<float, 8>;

// Right shift of each column's nibble in an AWQ word (column c of 8 sits in slot kAwqSlot[c]:
// core/quant/packing.h).
alignas(32) static constexpr uint32_t kAwqShift[8] = {0, 16, 4, 20, 8, 24, 12, 28};

// The codes of W in AutoGPTQ's packing: a word holds rows k0 .. k0 + per - 1 of one column.
struct GptqCodes {
  explicit GptqCodes(const GptqLayout& l) : qweight(l.qweight), n(l.n), bits(l.bits), per(32 / l.bits) {}
  const uint32_t* qweight;
  int64_t n;
  int bits, per;
  int rows_per_word() const { return per; }
  template <class D> HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Word(D /*d*/, int64_t k0, int64_t j) const {
    return hn::LoadU(hn::RebindToUnsigned<D>(), qweight + (k0 / per) * n + j);
  }
  template <class V> HWY_INLINE V Code(V word, int t) const {
    return hn::And(hn::ShiftRightSame(word, bits * t), hn::Set(hn::DFromV<V>(), (1u << bits) - 1u));
  }
};

// The codes of W in AutoAWQ's packing: a word holds 8 columns of one row.
struct AwqCodes {
  explicit AwqCodes(const AwqLayout& l) : qweight(l.qweight), n(l.n) {}
  const uint32_t* qweight;
  int64_t n;
  int rows_per_word() const { return 1; }
  template <class D> HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Word(D /*d*/, int64_t k, int64_t j) const {
    const hn::RebindToUnsigned<D> du;
    return hn::Set(du, qweight[k * (n / 8) + j / 8]) >> hn::LoadU(du, kAwqShift + j % 8);
  }
  template <class V> HWY_INLINE V Code(V word, int) const { return hn::And(word, hn::Set(hn::DFromV<V>(), 15u)); }
};

// out[i * ldo + j ..] for the V vectors of columns from j, M activation rows a (stride w.k).
template <int M, int V, class D, class Codes>
HWY_INLINE void GemvChunk(D d, const Codes& codes, const GroupedWeights& w, const float* a, int64_t j, float* out,
                          int64_t ldo) {
  const hn::RebindToSigned<D> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  using VF = hn::Vec<D>;
  VF total[M][V], run[M][V];
  float run_sum[M];
  for (int i = 0; i < M; ++i) {
    run_sum[i] = 0;
    for (int v = 0; v < V; ++v) total[i][v] = run[i][v] = hn::Zero(d);
  }
  int32_t g = w.group[0];
  const auto flush = [&] {
    for (int v = 0; v < V; ++v) {
      const VF s = hn::LoadU(d, w.scale + g * w.n + j + v * N);
      const VF z = hn::LoadU(d, w.zero + g * w.n + j + v * N);
      for (int i = 0; i < M; ++i) {
        total[i][v] = hn::MulAdd(s, hn::NegMulAdd(z, hn::Set(d, run_sum[i]), run[i][v]), total[i][v]);
        run[i][v] = hn::Zero(d);
      }
    }
    for (int i = 0; i < M; ++i) run_sum[i] = 0;
  };
  const int per = codes.rows_per_word();
  for (int64_t k0 = 0; k0 < w.k; k0 += per) {
    decltype(codes.Word(d, k0, j)) words[V];
    for (int v = 0; v < V; ++v) words[v] = codes.Word(d, k0, j + v * N);
    for (int t = 0; t < per; ++t) {
      const int64_t k = k0 + t;
      if (w.group[k] != g) {
        flush();
        g = w.group[k];
      }
      for (int v = 0; v < V; ++v) {
        const VF q = hn::ConvertTo(d, hn::BitCast(di, codes.Code(words[v], t)));
        for (int i = 0; i < M; ++i) run[i][v] = hn::MulAdd(q, hn::Set(d, a[i * w.k + k]), run[i][v]);
      }
      for (int i = 0; i < M; ++i) run_sum[i] += a[i * w.k + k];
    }
  }
  flush();
  for (int i = 0; i < M; ++i)
    for (int v = 0; v < V; ++v) hn::StoreU(total[i][v], d, out + i * ldo + j + v * N);
}

template <int M, class Codes>
HWY_FLATTEN void GemvColumns(const Codes& codes, const GroupedWeights& w, const float* a, int64_t j0, int64_t j1, float* out,
                 int64_t ldo) {
  const DP d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  constexpr int V = M == 1 ? 4 : M == 2 ? 2 : 1;  // column vectors per pass, as registers allow
  int64_t j = j0;
  for (; j + V * N <= j1; j += V * N) GemvChunk<M, V>(d, codes, w, a, j, out, ldo);
  for (; j + N <= j1; j += N) GemvChunk<M, 1>(d, codes, w, a, j, out, ldo);
  for (; j < j1; ++j) GemvChunk<M, 1>(hn::CappedTag<float, 1>(), codes, w, a, j, out, ldo);
}

template <class Codes>
void GemvDispatch(const Codes& codes, const GroupedWeights& w, const float* a, int64_t m, int64_t j0, int64_t j1,
                  float* out, int64_t ldo) {
  switch (m) {
    case 1: return GemvColumns<1>(codes, w, a, j0, j1, out, ldo);
    case 2: return GemvColumns<2>(codes, w, a, j0, j1, out, ldo);
    case 3: return GemvColumns<3>(codes, w, a, j0, j1, out, ldo);
    default: return GemvColumns<4>(codes, w, a, j0, j1, out, ldo);
  }
}

// Rows [k0, k1) of W (k0, k1 multiples of the rows per word), all n columns, into panel (stride n).
template <class Codes>
void DecodePanel(const Codes& codes, const GroupedWeights& w, int64_t k0, int64_t k1, float* panel) {
  const DP d;
  const hn::RebindToSigned<DP> di;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const hn::CappedTag<float, 1> d1;
  const hn::RebindToSigned<decltype(d1)> di1;
  const int per = codes.rows_per_word();
  for (int64_t kw = k0; kw < k1; kw += per)
    for (int t = 0; t < per; ++t) {
      const int64_t k = kw + t;
      const float* s = w.scale + w.group[k] * w.n;
      const float* z = w.zero + w.group[k] * w.n;
      float* row = panel + (k - k0) * w.n;
      int64_t j = 0;
      for (; j + N <= w.n; j += N) {
        const auto q = hn::ConvertTo(d, hn::BitCast(di, codes.Code(codes.Word(d, kw, j), t)));
        hn::StoreU(hn::Mul(hn::Sub(q, hn::LoadU(d, z + j)), hn::LoadU(d, s + j)), d, row + j);
      }
      for (; j < w.n; ++j) {
        const auto q = hn::ConvertTo(d1, hn::BitCast(di1, codes.Code(codes.Word(d1, kw, j), t)));
        hn::StoreU(hn::Mul(hn::Sub(q, hn::LoadU(d1, z + j)), hn::LoadU(d1, s + j)), d1, row + j);
      }
    }
}

void GptqGemv(const GptqLayout& l, const GroupedWeights& w, const float* a, int64_t m, int64_t j0, int64_t j1,
              float* out, int64_t ldo) {
  GemvDispatch(GptqCodes(l), w, a, m, j0, j1, out, ldo);
}
void AwqGemv(const AwqLayout& l, const GroupedWeights& w, const float* a, int64_t m, int64_t j0, int64_t j1, float* out,
             int64_t ldo) {
  GemvDispatch(AwqCodes(l), w, a, m, j0, j1, out, ldo);
}
void GptqPanel(const GptqLayout& l, const GroupedWeights& w, int64_t k0, int64_t k1, float* panel) {
  DecodePanel(GptqCodes(l), w, k0, k1, panel);
}
void AwqPanel(const AwqLayout& l, const GroupedWeights& w, int64_t k0, int64_t k1, float* panel) {
  DecodePanel(AwqCodes(l), w, k0, k1, panel);
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "core/ops/quant_params.h"
#include "core/quant/packing.h"
#include "cpu/kernels.h"
#include "cpu/quant/gptq_tiles.h"
#include "cpu/quant/quant_gemm.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(GptqGemv);
HWY_EXPORT(AwqGemv);
HWY_EXPORT(GptqPanel);
HWY_EXPORT(AwqPanel);

namespace {
constexpr int64_t kMaxGemvRows = 4;   // above this, sgemm on decoded panels reuses the weights better
constexpr int64_t kPanelRows = 256;   // rows of W decoded to F32 per sgemm call (a multiple of 8)
constexpr int64_t kGemvColumns = 32;  // columns per GEMV task: the widest chunk the kernel walks

// The scales, zeros and row groups of one call, widened to F32 / spelled out once.
struct Groups {
  std::vector<int32_t> group;
  std::vector<float> scale, zero;
  GroupedWeights view(int64_t k, int64_t n) const {
    return {group.data(), scale.data(), zero.data(), k, n, static_cast<int64_t>(scale.size()) / std::max<int64_t>(n, 1)};
  }
};

template <class ZeroFn>
Groups groups(const Tensor& scales, const int32_t* g_idx, int64_t k, int64_t n, int64_t group_size, ZeroFn zero) {
  Groups g;
  const int64_t count = k / group_size;
  g.group.resize(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) g.group[static_cast<size_t>(i)] = g_idx ? g_idx[i] : static_cast<int32_t>(i / group_size);
  g.scale.resize(static_cast<size_t>(count * n));
  to_f32(DType::F16, scales.data(), g.scale.data(), count * n);
  g.zero.resize(static_cast<size_t>(count * n));
  for (int64_t gi = 0; gi < count; ++gi)
    for (int64_t j = 0; j < n; ++j) g.zero[static_cast<size_t>(gi * n + j)] = static_cast<float>(zero(gi, j));
  return g;
}

// out[m, n] = a @ W for the codes in `layout`: the target's GEMV for small m, else panels of W
// (rows_per_word rows per packed word) decoded and multiplied by sgemm.
template <class Layout, class GemvFn, class PanelFn>
void grouped_gemm(const Layout& layout, int64_t rows_per_word, const GroupedWeights& w, const Tensor& a, int64_t m,
                  Tensor& out, GemvFn gemv, PanelFn panel_fn) {
  check(m < (1LL << 31) && w.n < (1LL << 31) && w.k < (1LL << 31), "gemm: dimensions exceed the BLAS int range");
  const QuantActivations act(a.dtype(), a.data(), m, w.k);
  std::vector<float> scratch;
  float* o = output_f32(scratch, out, m * w.n);
  // The GEMV folds the zero into a sum of the activations (s * (sum a q - z sum a)), where one
  // infinite activation makes inf - inf, and scales once per run, where an infinite scale times a
  // finite run sum is inf although the reference's s * (q - z) is NaN for every q == z: activations
  // or scales that are not all finite take the panels, whose products a * w give the reference's
  // infinities and NaNs.
  const auto is_finite = [](float x) { return std::isfinite(x); };
  const bool finite = std::all_of(act.a32.begin(), act.a32.end(), is_finite) &&
                      std::all_of(w.scale, w.scale + w.groups * w.n, is_finite);
  if (m <= kMaxGemvRows && finite) {
    const int64_t tasks = (w.n + kGemvColumns - 1) / kGemvColumns;
    parallel_for(tasks, 1, [&](int64_t t0, int64_t t1) {
      gemv(layout, w, act.a32.data(), m, t0 * kGemvColumns, std::min(w.n, t1 * kGemvColumns), o, w.n);
    });
  } else {
    std::vector<float> panel(static_cast<size_t>(std::min(kPanelRows, w.k) * w.n));
    const int64_t per = rows_per_word;
    for (int64_t k0 = 0; k0 < w.k; k0 += kPanelRows) {
      const int64_t rows = std::min(kPanelRows, w.k - k0);
      parallel_for(rows / per, std::max<int64_t>(1, 4096 / (w.n * per)), [&](int64_t r0, int64_t r1) {
        panel_fn(layout, w, k0 + r0 * per, k0 + r1 * per, panel.data() + r0 * per * w.n);
      });
      park_workers();  // OpenBLAS runs its own threads: ours must not spin beside them
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(w.n),
                  static_cast<int>(rows), 1.0f, act.a32.data() + k0, static_cast<int>(w.k), panel.data(),
                  static_cast<int>(w.n), k0 == 0 ? 0.0f : 1.0f, o, static_cast<int>(w.n));
    }
  }
  store_output(scratch, out);
}

void gemm_gptq(const GptqParams& p, TensorMap& t) {
  const int32_t* qzeros = tensor(t, "qzeros").as<int32_t>();
  const Groups g = groups(tensor(t, "scales"), p.desc_act ? tensor(t, "g_idx").as<int32_t>() : nullptr, p.k, p.n,
                          p.group_size, [&](int64_t gi, int64_t j) { return quant::gptq_zero(qzeros, p.n, p.bits, gi, j); });
  const GptqLayout layout{reinterpret_cast<const uint32_t*>(tensor(t, "qweight").data()), p.n, static_cast<int>(p.bits)};
  grouped_gemm(layout, 32 / p.bits, g.view(p.k, p.n), tensor(t, "a"), p.m, tensor(t, "out"),
               HWY_DYNAMIC_DISPATCH(GptqGemv), HWY_DYNAMIC_DISPATCH(GptqPanel));
}

void gemm_awq(const AwqParams& p, TensorMap& t) {
  const int32_t* qzeros = tensor(t, "qzeros").as<int32_t>();
  const Groups g = groups(tensor(t, "scales"), nullptr, p.k, p.n, p.group_size,
                          [&](int64_t gi, int64_t j) { return quant::awq_zero(qzeros, p.n, gi, j); });
  const AwqLayout layout{reinterpret_cast<const uint32_t*>(tensor(t, "qweight").data()), p.n};
  grouped_gemm(layout, 1, g.view(p.k, p.n), tensor(t, "a"), p.m, tensor(t, "out"), HWY_DYNAMIC_DISPATCH(AwqGemv),
               HWY_DYNAMIC_DISPATCH(AwqPanel));
}

// The tiles' int8 GEMV against the exact product: the activations move as the GGUF GEMV's do
// (int8_tolerance in cpu/quant/quant_gemm.cpp states the same analysis for its blocks): in blocks of
// 32 (sorted) rows, d = amax / 127, each by at most d / 2, uniformly, independently. An output
// sum_k W_k a_k then errs by sum_k W_k e_k, of mean square sum_k W_k^2 amax_k^2 / (12 * 127^2), against
// the output's own sum_k W_k^2 a_k^2: NMSE ~ E[d^2] / (12 E[a^2]), read from the case's activations
// (activation_peak_ratio; N(0, 1) activations give about 25 at their rare worst block). Over >= 64
// outputs (int8_gemv) the measured ratio stays within 4x of that (an F(64, 64) ratio passes 4 with a
// chance below 1e-7); plus the output's rounding (2 u_out)^2. The codes, scales and zeros are exact,
// and the F32 sums' rounding is orders of magnitude below. With act-order the blocks are 32 rows of
// the sorted order, so the ratio takes each activation row as one block (its amax over every value),
// a bound for any grouping.
std::optional<Tolerance> tile_gemv_tolerance(int64_t m, int64_t n, int64_t k, bool sorted, const TensorMap& in,
                                             DType out) {
  if (!int8_gemv(m, n)) return std::nullopt;
  const std::optional<double> ratio = activation_peak_ratio(in.at("a"), dense_rows(m, k), k, sorted ? 0 : 32);
  if (!ratio) return std::nullopt;
  return int8_tolerance(*ratio, sorted ? "32 sorted rows (bounded by each row's own amax)" : "32 rows", out);
}

// The repacked weights of a prepared decode, and the buffers its calls reuse (a launch's executes
// run one at a time).
struct TileDecode {
  std::shared_ptr<const GroupTiles> w;
  TileActivations act;
  std::vector<float> a32, out32;
};

// The GEMV on the tiles; false (nothing written) when an activation is not finite.
bool gemv_on_tiles(TileDecode& s, int64_t m, TensorMap& t) {
  const GroupTiles& w = *s.w;
  const Tensor& a = tensor(t, "a");
  const float* a32 = a.dtype() == DType::F32 ? a.as<float>() : nullptr;
  if (!a32) {
    s.a32.resize(static_cast<size_t>(m * w.k));
    to_f32(a.dtype(), a.data(), s.a32.data(), m * w.k);
    a32 = s.a32.data();
  }
  if (!quantize_activations(w, a32, m, s.act)) return false;
  Tensor& out = tensor(t, "out");
  float* o = output_f32(s.out32, out, m * w.n);
  tile_gemv(w, s.act, o, w.n);
  store_output(s.out32, out);
  return true;
}

// A decode with enough outputs for the int8 tolerance repacks the weights once here and runs on the
// tiles; every other call (prefill, a few outputs, activations that are not finite) runs `exact`.
// Whether every F16 scale is finite: the tiles scale each run's integer sum once, so an infinite
// scale would give inf where the reference has NaN (q == z): such weights run `exact`.
bool scales_finite(TensorMap& t) {
  const Tensor& s = tensor(t, "scales");
  for (int64_t i = 0; i < s.numel(); ++i)
    if (!std::isfinite(s.get(i))) return false;
  return true;
}

template <class P, class Exact, class Tile>
HostRun prepare(const P& p, TensorMap& t, Exact exact, Tile tile) {
  if (!int8_gemv(p.m, p.n) || !scales_finite(t)) return [p, &t, exact] { exact(p, t); };
  auto state = std::make_shared<TileDecode>();
  state->w = tile(p, t);
  return [p, &t, state, exact] {
    if (!gemv_on_tiles(*state, p.m, t)) exact(p, t);
  };
}

}  // namespace

void add_gptq_awq(KernelTable& k) {
  k.add_prepared(
      ops::gemm_gptq, [](const GptqParams& p, TensorMap& t) { return prepare(p, t, gemm_gptq, tile_gptq); }, {},
      [](const Problem& pr, const std::string&, const TensorMap& in) {
        const auto& p = pr.params.as<GptqParams>();
        return tile_gemv_tolerance(p.m, p.n, p.k, p.desc_act, in, pr.dtype);
      });
  k.add_prepared(
      ops::gemm_awq, [](const AwqParams& p, TensorMap& t) { return prepare(p, t, gemm_awq, tile_awq); }, {},
      [](const Problem& pr, const std::string&, const TensorMap& in) {
        const auto& p = pr.params.as<AwqParams>();
        return tile_gemv_tolerance(p.m, p.n, p.k, false, in, pr.dtype);
      });
}

}  // namespace ts::cpu
#endif
