#pragma once
// Where the golden case files are when no --golden-dir / --dir is given, so the same binary finds
// them in the build tree, in an installed tree and in the relocatable bundle.
#include <filesystem>
#include <string>

namespace ts {

// $TOUCHSTONE_GOLDEN_DIR when set; else installed_golden_dir(this executable) when there is one (an
// installed tree, wherever it was unpacked); else the source tree's golden/ this library was built
// from (empty when it was built without one).
std::string default_golden_dir();

// <exe's folder>/../share/touchstone/golden when that is a folder, else empty.
std::string installed_golden_dir(const std::filesystem::path& exe);

}  // namespace ts
