#include "core/ops/moe/pair_view.h"

#include "core/error.h"

namespace ts::moe {

int64_t PairView::last_start() const {
  if (pairs <= 0) return a_off;
  const int64_t last = pairs - 1;
  return checked::add(a_off,
                      checked::add(checked::mul(last / top_k, outer, "pairs x outer stride"),
                                   checked::mul(last % top_k, inner, "top_k x inner stride"), "a's last row"),
                      "a's offset + its last row");
}

PairView pair_view(const GemvQuantMoeIdParams& p) { return {.pairs = p.n_selected, .outer = p.src1_stride}; }

PairView pair_view(const GemvQuantMoeIdOffsetParams& p) {
  return {.pairs = p.n_selected, .ids_off = p.ids_offset, .a_off = p.a_offset, .outer = p.src1_stride};
}

PairView pair_view(const GemvQuantMoeIdBatchedParams& p) {
  return {.pairs = p.m * p.top_k, .top_k = p.top_k, .outer = p.src1_outer_stride, .inner = p.src1_inner_stride};
}

PairView pair_view(const GemvQuantMoeIdGateUpSiluParams& p) { return {.pairs = p.n_selected}; }

PairView pair_view(const GemmQuantMoeIdParams& p) {
  const bool shared = p.ne11 == 1;  // one activation row per token, shared by its top_k slots
  return {.pairs = p.batch * p.top_k,
          .top_k = p.top_k,
          .outer = shared ? p.w.n_cols : p.top_k * p.w.n_cols,
          .inner = shared ? 0 : p.w.n_cols};
}

void check_window(const PairView& v, int64_t n_cols, int64_t a_len, const std::string& op) {
  const int64_t last = v.last_start();
  check(checked::fits(last, n_cols, a_len),
        "{}: the last pair reads a[{} .. {} + n_cols = {}) (a_offset {} + (pairs - 1) / top_k x {} + (pairs - 1) % top_k "
        "x {}), past the end of a ({} elements)",
        op, last, last, n_cols, v.a_off, v.outer, v.inner, a_len);
}

}  // namespace ts::moe
