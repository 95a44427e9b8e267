#pragma once
// embedding_lookup and embedding_lookup_dev: one description, out[i, :] = table[ids[i], :] with U32 ids
// below vocab. They differ only in how the number of ids is stated (inferred from `ids` as `n`, or the
// parameter `batch` of the device-ids variant) and in the letter their case names give it.
#include <string>

#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"

namespace ts::embedding {

// How an op of the pair states its id count: the member, its name in errors, whether it is inferred
// from `ids` (else a parameter, checked before dim as parameters are), and the letter of case names.
template <class P> struct Count {
  int64_t P::*field;
  const char* what;
  bool inferred;
  char letter;
};

template <class P>
OpDef<P> def(const char* name, std::string summary, Count<P> count) {
  using namespace describe;
  // The shapes of both ops' cases and preset; '#' in a name is the count's letter.
  struct Shape {
    const char* name;
    Tier tier;
    int64_t vocab, dim, count;
  };
  auto presets = [count](std::initializer_list<Shape> shapes) {
    std::vector<Preset<P>> v;
    for (const Shape& s : shapes) {
      std::string n = s.name;
      n[n.find('#')] = count.letter;
      P p;
      p.vocab = s.vocab;
      p.dim = s.dim;
      p.*count.field = s.count;
      v.push_back({std::move(n), s.tier, p});
    }
    return v;
  };
  return {
      .name = name,
      .family = "core",
      .summary = std::move(summary),
      .tensors = [count](const P& p) {
        return std::vector{in("table", {p.vocab, p.dim}), pinned(in("ids", {p.*count.field}), DType::U32),
                           out("out", {p.*count.field, p.dim})};
      },
      .validate_params = [count](const P& p) {
        if (!count.inferred) positive(p.*count.field, count.what);
        positive(p.dim, "dim");
        positive(p.vocab, "vocab (table rows)");
        if (count.inferred) positive(p.*count.field, count.what);
      },
      .validate_data = [name](const P& p, const TensorMap& t) { indices_below(name, t, "ids", p.vocab, "vocab"); },
      .infer = [count](P& p, const TensorMap& t) {
        p.vocab = dim_of(t, "table", 2, 0);
        if (count.inferred) p.*count.field = dim_of(t, "ids", 1, 0);
      },
      .generate = [](const P& p, TensorMap& t, Rng& r) {
        normal(t["table"], r);
        index_values(t["ids"], p.vocab, r);
      },
      .tolerance = [](const P&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [count](const P& p, DType dt) {
        const double n = double(p.*count.field);
        return Cost{0, bytes(dt, 2.0 * n * double(p.dim)) + 4.0 * n};
      },
      .cases = presets({
          {"v1_d1_#1", Tier::Smoke, 1, 1, 1},
          {"v7_d3_#5", Tier::Smoke, 7, 3, 5},
          {"v100_d17_#33", Tier::Ci, 100, 17, 33},
          {"v1000_d257_#7", Tier::Ci, 1000, 257, 7},
          {"v33_d4097_#3", Tier::Ci, 33, 4097, 3},
          {"v5_d64_#200_repeats", Tier::Ci, 5, 64, 200},
          {"d4096_v1024_#16", Tier::Full, 1024, 4096, 16},
      }),
      // Llama-2 / Mistral vocabulary, a 1024-token prefill: 32 MB gathered per call in F32.
      .benches = presets({{"v32000_d4096_#1024", Tier::Full, 32000, 4096, 1024}}),
  };
}

}  // namespace ts::embedding
