#pragma once
// One exception type for every bad input the harness can see (malformed files, bad params, bad
// indices, missing drivers). The CLI turns it into a one-line message and exit 1.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace ts {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class... A>
[[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) {
  throw Error(fmt::format(f, std::forward<A>(a)...));
}

template <class... A>
void check(bool ok, fmt::format_string<A...> f, A&&... a) {
  if (!ok) throw Error(fmt::format(f, std::forward<A>(a)...));
}

}  // namespace ts
