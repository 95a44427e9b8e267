// embedding_lookup: out[i, :] = table[ids[i], :], ids U32 below vocab (core/ops/core/embedding_def.h).
#include "core/ops/core/embedding_def.h"

namespace ts {

const Op& op_embedding_lookup() {
  static const TypedOp<EmbeddingLookupParams> op(embedding::def<EmbeddingLookupParams>(
      "embedding_lookup", "out[i, :] = table[ids[i], :]",
      {&EmbeddingLookupParams::n, "n (number of ids)", /*inferred=*/true, 'n'}));
  return op;
}

}  // namespace ts
