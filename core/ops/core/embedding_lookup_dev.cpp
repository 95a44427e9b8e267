// embedding_lookup_dev: out[i, :] = table[ids[i], :] with the ids already on the device (the graph-
// friendly variant: no host round trip for the token ids).
#include "core/ops/core/inputs.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"
#include "reference/reference.h"

namespace ts {
using namespace describe;

namespace {
EmbeddingLookupDevParams gather(int64_t vocab, int64_t dim, int64_t batch) { return {batch, dim, vocab}; }
}  // namespace

const Op& op_embedding_lookup_dev() {
  static const TypedOp<EmbeddingLookupDevParams> op({
      .name = "embedding_lookup_dev",
      .family = "core",
      .summary = "out[i, :] = table[ids[i], :], ids a device buffer",
      .tensors = [](const EmbeddingLookupDevParams& p) {
        return std::vector{in("table", {p.vocab, p.dim}), pinned(in("ids", {p.batch}), DType::U32),
                           out("out", {p.batch, p.dim})};
      },
      .validate_params = [](const EmbeddingLookupDevParams& p) {
        positive(p.batch, "batch"); positive(p.dim, "dim"); positive(p.vocab, "vocab (table rows)");
      },
      .validate_data = [](const EmbeddingLookupDevParams& p, const TensorMap& t) {
        indices_below("embedding_lookup_dev", t, "ids", p.vocab, "vocab");
      },
      .infer = [](EmbeddingLookupDevParams& p, const TensorMap& t) { p.vocab = dim_of(t, "table", 2, 0); },
      .generate = [](const EmbeddingLookupDevParams& p, TensorMap& t, Rng& r) {
        normal(t["table"], r);
        index_values(t["ids"], p.vocab, r);
      },
      .reference = ref::embedding_lookup_dev,
      .tolerance = [](const EmbeddingLookupDevParams&, DType, const TensorMap&) { return tol::exact(); },
      .cost = [](const EmbeddingLookupDevParams& p, DType dt) {
        return Cost{0, bytes(dt, 2.0 * double(p.batch) * double(p.dim)) + 4.0 * double(p.batch)};
      },
      .cases = {
          {"v1_d1_b1", Tier::Smoke, gather(1, 1, 1)},
          {"v7_d3_b5", Tier::Smoke, gather(7, 3, 5)},
          {"v100_d17_b33", Tier::Ci, gather(100, 17, 33)},
          {"v1000_d257_b7", Tier::Ci, gather(1000, 257, 7)},
          {"v33_d4097_b3", Tier::Ci, gather(33, 4097, 3)},
          {"v5_d64_b200_repeats", Tier::Ci, gather(5, 64, 200)},
          {"d4096_v1024_b16", Tier::Full, gather(1024, 4096, 16)},
      },
      .benches = {
          // Llama-2 / Mistral vocabulary, a 1024-token prefill: 32 MB gathered per call in F32.
          {"v32000_d4096_b1024", Tier::Full, gather(32000, 4096, 1024)},
      },
  });
  return op;
}

}  // namespace ts
