#pragma once
// Parameter structs of the moe family (OPS.md, "Family moe"). Field names are the seed's argument
// names and the case file's metadata keys.
#include <cstdint>

#include "core/kinds.h"

namespace ts {

}  // namespace ts
