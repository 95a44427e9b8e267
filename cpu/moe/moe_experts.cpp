// The expert-GEMV engine (cpu/moe/moe_experts.h): activation rows prepared once, pairs grouped by
// expert, (expert, weight-row block) tasks over the thread pool, outputs scattered to their rows.
#include "cpu/moe/moe_experts.h"

#include <algorithm>
#include <cstring>

#include "core/quant/formats.h"
#include "cpu/moe/moe_combine.h"
#include "cpu/moe/moe_rows.h"
#include "cpu/quant/quant_gemm.h"
#include "cpu/quant/quant_rows.h"
#include "cpu/runtime/thread_pool.h"

namespace ts::cpu::moe {

Stack::Stack(const MoeExperts& w, const Tensor& t)
    : kind(w.kind), dtype(t.dtype()), n_rows(w.n_rows), n_cols(w.n_cols),
      row_bytes(quant::format(w.kind) ? quant::row_bytes(*quant::format(w.kind), w.n_cols)
                                      : w.n_cols * static_cast<int64_t>(dtype_size(t.dtype()))),
      data(t.data()) {}

bool Stack::quant() const { return quant::format(kind) != nullptr; }

namespace {

// Weight bytes per task: enough that claiming a task and restarting the prefetch stream stay small
// beside its rows, few enough that a decode step's experts (8 of Qwen3-30B-A3B's: 14 MB of gate and
// up) make tens of tasks per thread.
constexpr int64_t kTaskBytes = 128 << 10;

bool k_blocks(QuantKind kind) { return quant::block_format(kind).block_elems == 256; }

// Whether gemv quantizes the activations (gemv_tolerance agrees through it): GGUF experts with enough
// outputs for the int8 GEMV's NMSE bound, as gemm_quant decides for one activation row.
bool int8_for(const Stack& w, int64_t pairs) { return w.quant() && int8_gguf(1, pairs * w.n_rows); }

// The sites sorted by expert (stable: pair order within an expert), and where each expert's run starts.
struct Groups {
  Sites sites;
  ScratchVector<int64_t> start;  // group g is sites[start[g], start[g + 1])
};

// A counting sort by expert: stable, and in scratch (std::stable_sort takes a heap buffer per call).
Groups group(const Sites& sites) {
  int64_t experts = 0;
  for (const Site& s : sites) experts = std::max(experts, s.expert + 1);
  ScratchVector<int64_t> at(static_cast<size_t>(experts) + 1, 0);
  for (const Site& s : sites) ++at[static_cast<size_t>(s.expert) + 1];
  for (size_t e = 1; e < at.size(); ++e) at[e] += at[e - 1];
  Groups g{Sites(sites.size()), {}};
  for (const Site& s : sites) g.sites[static_cast<size_t>(at[static_cast<size_t>(s.expert)]++)] = s;
  for (size_t i = 0; i < g.sites.size(); ++i)
    if (i == 0 || g.sites[i].expert != g.sites[i - 1].expert) g.start.push_back(static_cast<int64_t>(i));
  g.start.push_back(static_cast<int64_t>(g.sites.size()));
  return g;
}

// The activations of the grouped sites: each distinct row of `a` widened (and quantized, when asked
// and every row is finite) once; per site, in group order, pointers to its row's forms.
class Activations {
 public:
  Activations(const Tensor& a, const Sites& sites, int64_t n_cols, bool int8, bool k_blocks) {
    ScratchVector<int64_t> starts;
    for (const Site& s : sites) starts.push_back(s.a_at);
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    prepare(a, starts, n_cols, int8, k_blocks);
    // A non-finite activation leaves its row unquantized: then every row takes the exact dot.
    int8_ = int8 && std::all_of(rows_.begin(), rows_.end(), [](const QuantActivations& r) {
              return !r.rows8.empty() || !r.rows8k.empty();
            });
    if (int8 && !int8_) prepare(a, starts, n_cols, false, false);
    finite_ = std::all_of(rows_.begin(), rows_.end(), [](const QuantActivations& r) { return r.finite; });
    for (const Site& s : sites) {
      const QuantActivations& r = rows_[static_cast<size_t>(std::lower_bound(starts.begin(), starts.end(), s.a_at) - starts.begin())];
      a32_.push_back(r.a32.data());
      sums_.push_back(r.sums.data());
      if (!r.rows8.empty()) q8_.push_back(r.rows8[0]);
      if (!r.rows8k.empty()) q8k_.push_back(r.rows8k[0]);
    }
  }

  // Rows [r0, r1) of expert e of w against sites [i, i + n): out[j * ldo + r - r0].
  void rows(const Stack& w, int64_t e, int64_t r0, int64_t r1, int64_t i, int64_t n, float* out, int64_t ldo) const {
    const auto at = [i](const auto& v) { return v.empty() ? nullptr : v.data() + i; };
    if (!w.quant()) return rows_plain(w.dtype, w.expert(e), w.n_cols, r0, r1, at(a32_), n, out, ldo);
    const auto* bytes = reinterpret_cast<const uint8_t*>(w.expert(e));
    if (int8_) return rows_int8(w.kind, bytes, w.n_cols, r0, r1, at(q8_), at(q8k_), n, out, ldo);
    if (finite_) return rows_exact(w.kind, bytes, w.n_cols, r0, r1, at(a32_), at(sums_), n, out, ldo);
    // A non-finite activation: the rows decoded to F32, then the plain rows' element-by-element dot
    // (QuantActivations::finite says why).
    thread_local std::vector<float> decoded;  // per thread, reused
    decoded.resize(static_cast<size_t>((r1 - r0) * w.n_cols));
    const quant::Format& f = quant::block_format(w.kind);
    for (int64_t r = r0; r < r1; ++r)
      f.dequantize_row(bytes + r * w.row_bytes, decoded.data() + (r - r0) * w.n_cols, w.n_cols);
    rows_plain(DType::F32, decoded.data(), w.n_cols, 0, r1 - r0, at(a32_), n, out, ldo);
  }

 private:
  void prepare(const Tensor& a, const ScratchVector<int64_t>& starts, int64_t n_cols, bool int8, bool k_blocks) {
    rows_.clear();
    rows_.reserve(starts.size());  // no reallocation: the int8 rows point into their own buffers
    const size_t es = dtype_size(a.dtype());
    for (int64_t s : starts)
      rows_.emplace_back(a.dtype(), a.data() + s * static_cast<int64_t>(es), 1, n_cols, int8 && !k_blocks,
                         int8 && k_blocks);
  }

  ScratchVector<QuantActivations> rows_;
  bool int8_ = false, finite_ = true;
  ScratchVector<const float*> a32_, sums_;
  ScratchVector<ActQ8> q8_;
  ScratchVector<ActQ8K> q8k_;
};

}  // namespace

void gemv(const Stack& w, const Stack* up, const Tensor& a, const Sites& sites, Tensor& out) {
  const Groups g = group(sites);
  const bool int8 = int8_for(w, static_cast<int64_t>(sites.size()));
  const Activations acts(a, g.sites, w.n_cols, int8, w.quant() && k_blocks(w.kind));
  thread_local std::vector<float> scratch;  // kept: a repeated call allocates nothing
  float* o = output_f32(scratch, out, out.numel());
  const int64_t stacks = up ? 2 : 1;
  const int64_t rows_per_task = std::clamp<int64_t>(kTaskBytes / (stacks * w.row_bytes), 1, w.n_rows);
  const int64_t blocks = (w.n_rows + rows_per_task - 1) / rows_per_task;
  const int64_t groups = static_cast<int64_t>(g.start.size()) - 1;
  // Each task's rows before they are scattered to their sites: one slice per task of a buffer the
  // call takes from its own thread's scratch (its size depends on the sites' count, never on which
  // experts they chose), so a call repeated with new ids allocates nothing, whichever worker runs
  // which task. Past kPerCallFloats (a large prefill), each worker's own buffer, grown as needed.
  constexpr int64_t kPerCallFloats = int64_t{4} << 20;
  const int64_t per_call_floats = stacks * static_cast<int64_t>(g.sites.size()) * w.n_rows;
  ScratchVector<float> per_call(per_call_floats <= kPerCallFloats ? static_cast<size_t>(per_call_floats) : 0);
  parallel_tasks(groups * blocks, [&](int64_t t) {
    const int64_t gi = t / blocks, r0 = t % blocks * rows_per_task, r1 = std::min(w.n_rows, r0 + rows_per_task);
    const int64_t i0 = g.start[static_cast<size_t>(gi)], n = g.start[static_cast<size_t>(gi) + 1] - i0, len = r1 - r0;
    const int64_t e = g.sites[static_cast<size_t>(i0)].expert;
    float* buf = nullptr;
    if (!per_call.empty()) {
      buf = per_call.data() + stacks * (i0 * w.n_rows + n * r0);  // group gi's region, block r0's part
    } else {
      thread_local std::vector<float> own;  // per thread, reused
      own.resize(static_cast<size_t>(stacks * n * len));
      buf = own.data();
    }
    acts.rows(w, e, r0, r1, i0, n, buf, len);
    if (up) acts.rows(*up, e, r0, r1, i0, n, buf + n * len, len);
    for (int64_t j = 0; j < n; ++j) {
      float* dst = o + g.sites[static_cast<size_t>(i0 + j)].out_row * w.n_rows + r0;
      if (up)
        silu_mul_f32(buf + j * len, buf + (n + j) * len, dst, len);
      else
        std::memcpy(dst, buf + j * len, static_cast<size_t>(len) * sizeof(float));
    }
  });
  store_output(scratch, out);
}

std::optional<Tolerance> gemv_tolerance(const MoeExperts& w, const Tensor& a, const Sites& sites, bool silu, DType out) {
  if (!quant::format(w.kind)) return std::nullopt;
  if (!int8_gguf(1, static_cast<int64_t>(sites.size()) * w.n_rows)) return std::nullopt;
  std::vector<int64_t> rows;
  for (const Site& s : sites) rows.push_back(s.a_at);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const bool k = k_blocks(w.kind);
  const std::optional<double> ratio = activation_peak_ratio(a, rows, w.n_cols, k ? 256 : 32);
  if (!ratio) return std::nullopt;
  Tolerance t = int8_tolerance(*ratio, k ? "256" : "32", out);
  // silu(g) * u of two int8 GEMVs, whose errors (relative mean square eps each, independent: other
  // weights) reach the product as silu'(g) u e_g + silu(g) e_u: an NMSE of
  // eps * (1 + E[silu'(g)^2] var(g) / E[silu(g)^2]); the ratio is at most 1.07 for Gaussian g of any
  // variance (1 at both ends, 1.068 at sigma 1.5, by quadrature), so 2.1 eps.
  if (silu) {
    t.max_nmse *= 2.1;
    t.why += "; silu(gate) * up: x (1 + E[silu'(g)^2] var(g) / E[silu(g)^2] <= 1.07) = 2.1";
  }
  return t;
}

}  // namespace ts::cpu::moe
