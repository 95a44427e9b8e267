// embedding_lookup_dev: out[i, :] = table[ids[i], :] with the ids already on the device (the graph-
// friendly variant: no host round trip for the token ids); embedding_lookup's description with the
// id count a parameter, `batch` (core/ops/core/embedding_def.h).
#include "core/ops/core/embedding_def.h"

namespace ts {

const Op& op_embedding_lookup_dev() {
  static const TypedOp<EmbeddingLookupDevParams> op(embedding::def<EmbeddingLookupDevParams>(
      "embedding_lookup_dev", "out[i, :] = table[ids[i], :], ids a device buffer",
      {&EmbeddingLookupDevParams::batch, "batch", /*inferred=*/false, 'b'}));
  return op;
}

}  // namespace ts
