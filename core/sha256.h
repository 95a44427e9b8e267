#pragma once
// SHA-256 of a byte string, as lowercase hex: the golden manifest's checksums.
#include <string>
#include <string_view>

namespace ts {
std::string sha256_hex(std::string_view data);
}
