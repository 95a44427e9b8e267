#pragma once
// Where the golden case files are when no --golden-dir / --dir is given, so the same binary finds
// them in the build tree, in an installed tree and in the relocatable bundle.
#include <string>

namespace ts {

// $TOUCHSTONE_GOLDEN_DIR when set; else <dir of this executable>/../share/touchstone/golden when
// that exists (an installed tree, wherever it was unpacked); else the source tree's golden/ this
// library was built from (empty when it was built without one).
std::string default_golden_dir();

}  // namespace ts
