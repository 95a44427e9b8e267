// The GGUF block kinds: dequantize, gemm_quant and gemm_quant_fused. Decode and prefill both read the
// weights in registers, blocks of weight rows claimed by the threads in turn, as integer dot products
// on activations quantized to int8 (cpu/quant/quant_rows.h; judged by the NMSE bound derived below): the
// weights are read once from memory, and a prefill's 4 activation rows at a time pass a block of
// them held in L2. (The F32 route, decoding panels of weight rows for OpenBLAS's sgemm, ran the
// Q4_K m512 prefill at 0.7x of sgemm; the integer dots, 4x denser in values per instruction, beat
// sgemm itself.) Too few outputs for the bound, or a non-finite activation, take the exact F32 route:
// a GEMV for m <= 4, the decoded panels and sgemm above. The per-kind decode lives in
// cpu/quant/quant_decode-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/quant/quant_gemm.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "core/kinds.h"
#include "cpu/quant/quant_decode-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ts::cpu::HWY_NAMESPACE {

// Rows [r0, r1) of w (k values each) decoded into out (row stride k). Flattened, as the GEMV below:
// the per-kind visitors' lambdas must inline into the loops for the decode to stay in registers.
HWY_FLATTEN void DecodeRows(QuantKind kind, const uint8_t* w, int64_t k, int64_t r0, int64_t r1, float* out) {
  VisitKind(kind, [&](auto block) {
    using K = decltype(block);
    const int64_t blocks = k / K::kElems;
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t b = 0; b < blocks; ++b)
        DecodeBlock<K>(w + (r * blocks + b) * K::kBytes, out + r * k + b * K::kElems);
  });
}

void SumsPer16Rows(const float* a, int64_t m, int64_t k, float* sums) {
  for (int64_t i = 0; i < m; ++i) SumsPer16(a + i * k, k, sums + i * (k / kSumSpan));
}

// `count` blocks of n values of x (n a multiple of 16) to int8 q: per block d = amax / 127 and
// q = round(x / d) to nearest, ties to even, so |x - d q| <= d / 2 (|q| <= 127, never -128: the
// signed dot's sign trick needs it); sums16[j] = the sum of q over values 16 j .. 16 j + 15.
void QuantizeBlocks(const float* HWY_RESTRICT x, int64_t count, int n, int8_t* HWY_RESTRICT q, float* HWY_RESTRICT d,
                    int32_t* HWY_RESTRICT sums16) {
  const DQ df;
  const DQI di;
  const hn::Rebind<int8_t, DQ> d8;
  const int N = static_cast<int>(hn::Lanes(df));
  for (int64_t b = 0; b < count; ++b) {
    const float* xb = x + b * n;
    VQ vmax = hn::Zero(df);
    for (int l = 0; l < n; l += N) vmax = hn::Max(vmax, hn::Abs(hn::LoadU(df, xb + l)));
    const float amax = hn::GetLane(hn::MaxOfLanes(df, vmax));
    const VQ inv = hn::Set(df, amax > 0 ? 127.0f / amax : 0.0f);
    for (int j = 0; j < n / 16; ++j) {
      VQI sum = hn::Zero(di);
      for (int l = 16 * j; l < 16 * j + 16; l += N) {
        const VQI v = hn::Min(hn::Max(hn::NearestInt(hn::Mul(hn::LoadU(df, xb + l), inv)), hn::Set(di, -127)), hn::Set(di, 127));
        sum = hn::Add(sum, v);
        hn::StoreU(hn::DemoteTo(d8, v), d8, q + b * n + l);
      }
      sums16[b * (n / 16) + j] = hn::GetLane(hn::SumOfLanes(di, sum));
    }
    d[b] = amax / 127.0f;
  }
}

template <class K, int M>
HWY_FLATTEN void GemvRowsOf(const float* a, const float* sums, int64_t k, const uint8_t* w, int64_t r0, int64_t r1, float* out,
                int64_t ldo) {
  const int64_t blocks = k / K::kElems;
  for (int64_t r = r0; r < r1; ++r)
    DotRow<K, M>(w + r * blocks * K::kBytes, blocks, a, k, sums, k / kSumSpan, out + r, ldo);
}

// Rows [r0, r1) of out[i * ldo + r] = a[i] . dequant(w row r), for the m <= 4 F32 activation rows of
// a (stride k) and their per-16 sums.
void Gemv(QuantKind kind, const float* a, const float* sums, int64_t m, int64_t k, const uint8_t* w, int64_t r0,
          int64_t r1, float* out, int64_t ldo) {
  VisitKind(kind, [&](auto block) {
    using K = decltype(block);
    switch (m) {
      case 1: return GemvRowsOf<K, 1>(a, sums, k, w, r0, r1, out, ldo);
      case 2: return GemvRowsOf<K, 2>(a, sums, k, w, r0, r1, out, ldo);
      case 3: return GemvRowsOf<K, 3>(a, sums, k, w, r0, r1, out, ldo);
      default: return GemvRowsOf<K, 4>(a, sums, k, w, r0, r1, out, ldo);
    }
  });
}

}  // namespace ts::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/ops/quant_params.h"
#include "core/quant/formats.h"
#include "cpu/kernels.h"
#include "cpu/quant/quant_gemm.h"
#include "cpu/quant/quant_rows.h"
#include "cpu/runtime/common.h"
#include "cpu/runtime/convert.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu {
HWY_EXPORT(DecodeRows);
HWY_EXPORT(SumsPer16Rows);
HWY_EXPORT(Gemv);
HWY_EXPORT(QuantizeBlocks);

namespace {
constexpr int64_t kMaxGemvRows = 4;  // the exact route: a GEMV up to here, sgemm on decoded panels above
constexpr int64_t kPanelRows = 256;  // weight rows decoded to F32 per sgemm call (4 MiB at k = 4096)

void decode_rows_parallel(QuantKind kind, const uint8_t* w, int64_t k, int64_t rows, float* out) {
  parallel_for(rows, std::max<int64_t>(1, 16384 / k), [&](int64_t r0, int64_t r1) {
    HWY_DYNAMIC_DISPATCH(DecodeRows)(kind, w, k, r0, r1, out);
  });
}

void dequantize(const QuantRowsParams& p, TensorMap& t) {
  decode_rows_parallel(p.kind, tensor(t, "bytes").as<uint8_t>(), p.n_cols, p.n_rows, tensor(t, "out").as<float>());
}

}  // namespace

bool int8_gemv(int64_t m, int64_t outputs) { return m <= kMaxGemvRows && m * outputs >= kMinInt8Outputs; }
bool int8_gguf(int64_t m, int64_t outputs) { return m * outputs >= kMinInt8Outputs; }

void QuantActivations::reset(DType dt, const void* a, int64_t m_, int64_t k_, bool int8, bool int8_k) {
  m = m_, k = k_;
  sums.clear(), rows8.clear(), rows8k.clear();
  a32.resize(static_cast<size_t>(m * k));
  to_f32(dt, a, a32.data(), m * k);
  finite = std::all_of(a32.begin(), a32.end(), [](float x) { return std::isfinite(x); });
  if (m > kMaxGemvRows && !int8 && !int8_k) return;  // sgemm on decoded panels: F32 rows are all it reads
  if (finite && int8 && k % 32 == 0) quantize_int8();
  if (finite && int8_k && k % 256 == 0) quantize_int8_k();
  // The exact GEMV's sums, where int8 was not asked for or not possible (prefill falls back to sgemm).
  if (m <= kMaxGemvRows && ((int8 && rows8.empty()) || (int8_k && rows8k.empty()) || (!int8 && !int8_k))) {
    sums.resize(static_cast<size_t>(m * (k / 16)));
    HWY_DYNAMIC_DISPATCH(SumsPer16Rows)(a32.data(), m, k, sums.data());
  }
}

void QuantActivations::quantize_int8() {
  const int64_t blocks = m * k / 32;
  q8.resize(static_cast<size_t>(m * k));
  // Padded: the GEMV reads the scales and sums of 8 blocks of 32 at a time, a row's tail included.
  d8.resize(static_cast<size_t>(blocks + 8));
  fs32.resize(static_cast<size_t>(blocks + 8));
  fs16.resize(static_cast<size_t>(2 * blocks));
  block_sums.resize(static_cast<size_t>(2 * blocks));
  const auto& sums = block_sums;
  HWY_DYNAMIC_DISPATCH(QuantizeBlocks)(a32.data(), blocks, 32, q8.data(), d8.data(), block_sums.data());
  for (size_t b = 0; b < static_cast<size_t>(blocks); ++b) {
    fs16[2 * b] = d8[b] * static_cast<float>(sums[2 * b]);
    fs16[2 * b + 1] = d8[b] * static_cast<float>(sums[2 * b + 1]);
    fs32[b] = d8[b] * static_cast<float>(sums[2 * b] + sums[2 * b + 1]);
  }
  // The full groups of each row reordered, its tail (k % 256 values) copied in natural order.
  q8p.resize(q8.size());
  for (int64_t i = 0; i < m; ++i) {
    int64_t g = 0;
    for (; g + kPairGroup <= k; g += kPairGroup) {
      const int8_t* from = q8.data() + i * k + g;
      int8_t* to = q8p.data() + i * k + g;
      for (int j = 0; j < 8; ++j)
        for (int l = 0; l < 32; l += 16) std::copy_n(from + 32 * j + l, 16, to + paired_at(j, l));
    }
    std::copy(q8.begin() + i * k + g, q8.begin() + (i + 1) * k, q8p.begin() + i * k + g);
  }
  for (int64_t i = 0; i < m; ++i) {
    const size_t at = static_cast<size_t>(i * k);
    rows8.push_back(
        {q8.data() + at, q8p.data() + at, d8.data() + at / 32, fs32.data() + at / 32, fs16.data() + at / 16});
  }
}

void QuantActivations::quantize_int8_k() {
  q8k.resize(static_cast<size_t>(m * k));
  d8k.resize(static_cast<size_t>(m * k / 256));
  bs16.resize(static_cast<size_t>(m * k / 16));
  bs32.resize(static_cast<size_t>(m * k / 32));
  block_sums.resize(bs16.size());
  const auto& sums = block_sums;
  HWY_DYNAMIC_DISPATCH(QuantizeBlocks)(a32.data(), m * k / 256, 256, q8k.data(), d8k.data(), block_sums.data());
  // |a 16-sum| <= 16 * 127 and |a 32-sum| <= 32 * 127: both fit int16.
  for (size_t j = 0; j < bs16.size(); ++j) bs16[j] = static_cast<int16_t>(sums[j]);
  for (size_t j = 0; j < bs32.size(); ++j) bs32[j] = static_cast<int16_t>(sums[2 * j] + sums[2 * j + 1]);
  for (int64_t i = 0; i < m; ++i) {
    const size_t at = static_cast<size_t>(i * k);
    rows8k.push_back({q8k.data() + at, d8k.data() + at / 256, bs16.data() + at / 16, bs32.data() + at / 32});
  }
}

void gguf_gemm(QuantKind kind, const QuantActivations& a, const uint8_t* w, int64_t n_rows, float* out, int64_t ldo,
               bool int8) {
  const int64_t m = a.m, k = a.k;
  check(m < (1LL << 31) && n_rows < (1LL << 31) && k < (1LL << 31) && ldo < (1LL << 31),
        "gemm_quant: dimensions exceed the BLAS int range");
  const bool k_blocks = quant::block_format(kind).block_elems == 256;
  if (int8 && (k_blocks ? !a.rows8k.empty() : !a.rows8.empty())) {
    // Many small tasks taken in turn rather than one half per thread: a thread the machine delays
    // (other work on its core) then costs a task, not half the call.
    const int64_t tasks = std::clamp<int64_t>(n_rows * k / (1 << 18), 1, 64);
    parallel_tasks(tasks, [&](int64_t t) {
      const int64_t r0 = n_rows * t / tasks;
      rows_int8(kind, w, k, r0, n_rows * (t + 1) / tasks, a.rows8.data(), a.rows8k.data(), m, out + r0, ldo);
    });
    return;
  }
  if (m <= kMaxGemvRows && a.finite) {  // a non-finite activation: the decoded panels (QuantActivations::finite)
    check(!a.sums.empty(), "gemm_quant: internal: activations prepared for the int8 GEMV of other kinds");
    parallel_for(n_rows, std::max<int64_t>(4, 65536 / (k * m)), [&](int64_t r0, int64_t r1) {
      HWY_DYNAMIC_DISPATCH(Gemv)(kind, a.a32.data(), a.sums.data(), m, k, w, r0, r1, out, ldo);
    });
    return;
  }
  const int64_t row_bytes = quant::row_bytes(quant::block_format(kind), k);
  std::vector<float> panel(static_cast<size_t>(std::min(kPanelRows, n_rows) * k));
  for (int64_t r0 = 0; r0 < n_rows; r0 += kPanelRows) {
    const int64_t rows = std::min(kPanelRows, n_rows - r0);
    decode_rows_parallel(kind, w + r0 * row_bytes, k, rows, panel.data());
    park_workers();  // OpenBLAS runs its own threads: ours must not spin beside them
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(rows), static_cast<int>(k),
                1.0f, a.a32.data(), static_cast<int>(k), panel.data(), static_cast<int>(k), 0.0f, out + r0,
                static_cast<int>(ldo));
  }
}

void store_output(const std::vector<float>& out32, Tensor& out) {
  if (out.dtype() == DType::F32) return;
  const int64_t n = static_cast<int64_t>(out32.size());
  parallel_for(n, 16384, [&](int64_t i0, int64_t i1) {
    from_f32(out.dtype(), out32.data() + i0, out.data() + i0 * static_cast<int64_t>(dtype_size(out.dtype())), i1 - i0);
  });
}

float* output_f32(std::vector<float>& scratch, Tensor& out, int64_t elems) {
  if (out.dtype() == DType::F32) return out.as<float>();
  scratch.resize(static_cast<size_t>(elems));
  return scratch.data();
}

namespace {

// The K kinds' GEMV takes activations in blocks of 256, the others in blocks of 32.
bool k_blocks(QuantKind kind) { return quant::block_format(kind).block_elems == 256; }

void gemm_quant(const GemmQuantParams& p, TensorMap& t) {
  const Tensor& a = tensor(t, "a");
  Tensor& out = tensor(t, "out");
  const bool int8 = int8_gguf(p.m, p.n_rows);
  // The calling thread's activations and scratch, kept from call to call: a decode step's GEMVs,
  // replayed, allocate nothing.
  thread_local QuantActivations act;
  act.reset(a.dtype(), a.data(), p.m, p.n_cols, int8 && !k_blocks(p.kind), int8 && k_blocks(p.kind));
  thread_local std::vector<float> scratch;
  float* o = output_f32(scratch, out, p.m * p.n_rows);
  gguf_gemm(p.kind, act, tensor(t, "weight").as<uint8_t>(), p.n_rows, o, p.n_rows, int8);
  store_output(scratch, out);
}

void gemm_quant_fused(const GemmQuantFusedParams& p, TensorMap& t) {
  const Tensor& a = tensor(t, "a");
  Tensor& out = tensor(t, "out");
  const int64_t total = p.total_rows();
  // Each part as gemm_quant would run it alone (int8 or exact by its own output count), so the fused
  // op is its parts side by side, bit for bit.
  bool of32 = false, of256 = false;
  for (int i = 0; i < p.parts(); ++i)
    if (int8_gguf(p.m, p.n_rows[i])) (k_blocks(p.kind[i]) ? of256 : of32) = true;
  const QuantActivations act(a.dtype(), a.data(), p.m, p.n_cols, of32, of256);
  std::vector<float> scratch;
  float* o = output_f32(scratch, out, p.m * total);
  int64_t col0 = 0;
  for (int i = 0; i < p.parts(); ++i) {
    gguf_gemm(p.kind[i], act, tensor(t, "weight." + std::to_string(i)).as<uint8_t>(), p.n_rows[i], o + col0, total,
              int8_gguf(p.m, p.n_rows[i]));
    col0 += p.n_rows[i];
  }
  store_output(scratch, out);
}

}  // namespace


void add_quant(KernelTable& k) {
  k.add(ops::dequantize, dequantize);
  k.add(ops::gemm_quant, gemm_quant, {}, [](const Problem& pr, const std::string&, const TensorMap& in) {
    const auto& p = pr.params.as<GemmQuantParams>();
    if (!int8_gguf(p.m, p.n_rows)) return std::optional<Tolerance>();
    const int64_t block = k_blocks(p.kind) ? 256 : 32;
    const auto ratio = activation_peak_ratio(in.at("a"), dense_rows(p.m, p.n_cols), p.n_cols, block);
    return ratio ? std::optional(int8_tolerance(*ratio, block == 256 ? "256" : "32", pr.dtype)) : std::nullopt;
  });
  k.add(ops::gemm_quant_fused, gemm_quant_fused, {}, [](const Problem& pr, const std::string&, const TensorMap& in) {
    const auto& p = pr.params.as<GemmQuantFusedParams>();
    bool any_int8 = false, any_k = false;
    for (int i = 0; i < p.parts(); ++i)
      if (int8_gguf(p.m, p.n_rows[i])) {
        any_int8 = true;
        any_k = any_k || k_blocks(p.kind[i]);
      }
    if (!any_int8) return std::optional<Tolerance>();
    // A call with any K part takes the larger of the two blockings' ratios (the NMSE over all its
    // outputs is a mix of the parts').
    const auto rows = dense_rows(p.m, p.n_cols);
    const auto r32 = activation_peak_ratio(in.at("a"), rows, p.n_cols, 32);
    const auto r256 = any_k ? activation_peak_ratio(in.at("a"), rows, p.n_cols, 256) : r32;
    if (!r32 || !r256) return std::optional<Tolerance>();
    return std::optional(int8_tolerance(std::max(*r32, *r256), any_k ? "32 and 256" : "32", pr.dtype));
  });
}

}  // namespace ts::cpu
#endif
