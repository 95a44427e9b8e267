#pragma once
// A backend's refusal found only when it plans or launches a case (a scratch buffer above a device
// limit, a value past the kernels' 32-bit indices, a grid too large): the case is valid, this backend
// cannot run it. Reported like a "no" from Backend::supports: "unsupported: <reason>", a skip in the
// matrix and in `touchstone matrix`, the same one line from `touchstone check` (conformance/check.h),
// never a failure.
#include <utility>

#include "core/error.h"

namespace ts {

class Unsupported : public Error {
 public:
  using Error::Error;
};

template <class... A>
void supported_only_if(bool ok, fmt::format_string<A...> f, A&&... a) {
  if (!ok) throw Unsupported(fmt::format(f, std::forward<A>(a)...));
}

}  // namespace ts
