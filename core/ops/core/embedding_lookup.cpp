// embedding_lookup: out[i, :] = table[ids[i], :], ids U32 below vocab.
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"
#include "reference/reference.h"

namespace ts {
using namespace describe;

namespace {
EmbeddingLookupParams gather(int64_t vocab, int64_t dim, int64_t n) { return {dim, vocab, n}; }
}  // namespace

const Op& op_embedding_lookup() {
  static const TypedOp<EmbeddingLookupParams> op({
      .name = "embedding_lookup",
      .family = "core",
      .summary = "out[i, :] = table[ids[i], :]",
      .tensors = [](const EmbeddingLookupParams& p) {
        return std::vector{in("table", {p.vocab, p.dim}), pinned(in("ids", {p.n}), DType::U32),
                           out("out", {p.n, p.dim})};
      },
      .validate_params = [](const EmbeddingLookupParams& p) {
        positive(p.dim, "dim"); positive(p.vocab, "vocab (table rows)"); positive(p.n, "n (number of ids)");
      },
      .validate_data = [](const EmbeddingLookupParams& p, const TensorMap& t) {
        indices_below("embedding_lookup", t, "ids", p.vocab, "vocab");
      },
      .infer = [](EmbeddingLookupParams& p, const TensorMap& t) {
        p.vocab = dim_of(t, "table", 2, 0);
        p.n = dim_of(t, "ids", 1, 0);
      },
      .generate = [](const EmbeddingLookupParams& p, TensorMap& t, Rng& r) {
        normal(t["table"], r);
        index_values(t["ids"], p.vocab, r);
      },
      .reference = ref::embedding_lookup,
      .tolerance = [](const EmbeddingLookupParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const EmbeddingLookupParams& p, DType dt) {
        return Cost{0, bytes(dt, 2.0 * double(p.n) * double(p.dim)) + 4.0 * double(p.n)};
      },
      .cases = {
          {"v1_d1_n1", Tier::Smoke, gather(1, 1, 1)},
          {"v7_d3_n5", Tier::Smoke, gather(7, 3, 5)},
          {"v100_d17_n33", Tier::Ci, gather(100, 17, 33)},
          {"v1000_d257_n7", Tier::Ci, gather(1000, 257, 7)},
          {"v33_d4097_n3", Tier::Ci, gather(33, 4097, 3)},
          {"v5_d64_n200_repeats", Tier::Ci, gather(5, 64, 200)},
          {"d4096_v1024_n16", Tier::Full, gather(1024, 4096, 16)},
      },
      .benches = {
          // Llama-2 / Mistral vocabulary, a 1024-token prefill: 32 MB gathered per call in F32.
          {"v32000_d4096_n1024", Tier::Full, gather(32000, 4096, 1024)},
      },
  });
  return op;
}

}  // namespace ts
