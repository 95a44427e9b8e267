#pragma once
// One builder for the moe family's five expert-GEMV ops (gemv_quant_moe_id, _offset, _batched,
// _gate_up_silu, _gate_up_silu_batched): they are one computation over their pair view
// (core/ops/moe/pair_view.h), with or without the fused gate + up + SiLU, and differ only in the
// parameter checks of their own fields, how ids are drawn and their presets. The tensors, the window
// and expert-id checks, the inference of flat buffers' lengths, the generator, the tolerance and the
// cost are written once here, all read through the view.
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ops/describe.h"
#include "core/ops/moe/experts_common.h"
#include "core/ops/moe/pair_view.h"

namespace ts::moe_experts {

template <class P> struct GemvSpec {
  std::string name, summary;
  bool silu = false;  // gate_w and up_w into silu_out (silu(gate) * up), else weights into out
  // The op's checks of its own fields (n_selected, strides, offsets), before the view's window checks.
  std::function<void(const P&)> check_fields;
  std::vector<Preset<P>> cases, benches;
};

// a is a flat buffer of a_len elements (inferred) where the op has that field, else one row of n_cols;
// ids holds ids_len (inferred) where the op has that field, else exactly the pairs' ids.
template <class P> int64_t a_len_of(const P& p) {
  if constexpr (requires { p.a_len; }) return p.a_len;
  else return p.w.n_cols;
}
template <class P> int64_t ids_len_of(const P& p) {
  if constexpr (requires { p.ids_len; }) return p.ids_len;
  else return moe::pair_view(p).pairs;
}

template <class P> OpDef<P> gemv_def(GemvSpec<P> s) {
  using namespace describe;
  const bool silu = s.silu;
  const std::vector<std::string> stacks = silu ? std::vector<std::string>{"gate_w", "up_w"} : std::vector<std::string>{"weights"};
  const char* out_name = silu ? "silu_out" : "out";
  OpDef<P> d;
  d.name = s.name, d.family = "moe", d.summary = std::move(s.summary);
  d.tensors = [stacks, out_name](const P& p) {
    const moe::PairView v = moe::pair_view(p);
    std::vector<TensorDecl> t{in("a", {a_len_of(p)})};
    for (const std::string& st : stacks) t.push_back(weights(st, p.w));
    t.push_back(pinned(in("ids", {ids_len_of(p)}), DType::I32));
    t.push_back(out(out_name, {v.pairs, p.w.n_rows}));
    return t;
  };
  d.validate_params = [check_fields = std::move(s.check_fields), name = s.name](const P& p) {
    check(p.w);
    check_fields(p);
    const moe::PairView v = moe::pair_view(p);
    moe::check_window(v, p.w.n_cols, a_len_of(p), name);
    ts::check(checked::fits(v.ids_off, v.pairs, ids_len_of(p)),
              "{}: ids_offset {} + {} pairs runs past the end of ids ({} elements)", name, v.ids_off, v.pairs,
              ids_len_of(p));
  };
  d.validate_data = [](const P& p, const TensorMap& t) {
    const moe::PairView v = moe::pair_view(p);
    check_plain_kind(p.w, t);
    check_expert_ids(t, "ids", v.ids_off, v.pairs, p.w.num_experts);
  };
  d.infer = [stacks](P& p, const TensorMap& t) {
    if constexpr (requires { p.a_len; }) p.a_len = dim_of(t, "a", 1, 0);
    if constexpr (requires { p.ids_len; }) p.ids_len = dim_of(t, "ids", 1, 0);
    for (const std::string& st : stacks) check_weight_bytes(t, st, p.w);
  };
  // The batched ops draw m tokens of top_k distinct experts; the others one token's picks (or, past
  // num_experts, independent picks). ids outside the view's window are out-of-range experts: a kernel
  // that reads one fails.
  d.generate = [stacks](const P& p, TensorMap& t, Rng& r) {
    const moe::PairView v = moe::pair_view(p);
    normal(t["a"], r);
    for (const std::string& st : stacks) fill_weights(p.w, t[st], r);
    int32_t* ids = t["ids"].as<int32_t>();
    for (int64_t i = 0; i < ids_len_of(p); ++i) ids[i] = i % 2 ? -1 : std::numeric_limits<int32_t>::max();
    if constexpr (std::is_same_v<P, GemvQuantMoeIdBatchedParams>)
      route(p.m, p.top_k, p.w.num_experts, ids + v.ids_off, r);
    else
      route_pairs(v.pairs, p.w.num_experts, ids + v.ids_off, r);
  };
  if (silu)
    d.tolerance = [](const P& p, DType dt, const TensorMap& in) { return silu_product(dt, p.w, in); };
  else
    d.tolerance = [](const P& p, DType dt, const TensorMap& in) { return dot(dt, p.w, in); };
  d.cost = [silu](const P& p, DType dt) {
    const moe::PairView v = moe::pair_view(p);
    // The batched ops' m tokens of top_k distinct picks, else one token's picks (as generate draws them).
    const double experts = std::is_same_v<P, GemvQuantMoeIdBatchedParams>
                               ? selected_experts(p.w.num_experts, v.top_k, v.pairs / v.top_k)
                               : routed_experts(v.pairs, p.w.num_experts);
    return moe_experts::cost(p.w, dt, silu ? 2 : 1, experts, v.pairs, v.rows_read());
  };
  d.view = [](const P& p) { return std::any(moe::pair_view(p)); };
  d.cases = std::move(s.cases), d.benches = std::move(s.benches);
  return d;
}

}  // namespace ts::moe_experts
