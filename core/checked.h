#pragma once
// Checked integer arithmetic for everything a file can drive: parameters, shapes, offsets, positions.
// A value read from a case file can be anything up to 2^63 - 1, so a check written `offset + len <=
// size` wraps and passes; these helpers never overflow and raise ts::Error (a one-line message
// naming `what`) instead. Used by every validation, tensor declaration and reader check, and by the
// kernels' index arithmetic where a parameter drives it.
#include <cstdint>
#include <limits>

#include "core/error.h"

namespace ts::checked {

// a + b, or an Error "<what>: a + b overflows".
inline int64_t add(int64_t a, int64_t b, const char* what = "size") {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail("{}: {} + {} overflows a 64-bit integer", what, a, b);
  return r;
}

// a * b, or an Error "<what>: a * b overflows".
inline int64_t mul(int64_t a, int64_t b, const char* what = "size") {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail("{}: {} * {} overflows a 64-bit integer", what, a, b);
  return r;
}

inline uint64_t add_u(uint64_t a, uint64_t b, const char* what = "size") {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail("{}: {} + {} overflows a 64-bit integer", what, a, b);
  return r;
}

inline uint64_t mul_u(uint64_t a, uint64_t b, const char* what = "size") {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail("{}: {} * {} overflows a 64-bit integer", what, a, b);
  return r;
}

// Whether [offset, offset + len) lies inside [0, size), written so that no operand can wrap:
// false for a negative offset, length or size, true for an empty range at offset <= size.
inline bool fits(int64_t offset, int64_t len, int64_t size) {
  return offset >= 0 && len >= 0 && size >= 0 && offset <= size && len <= size - offset;
}
inline bool fits_u(uint64_t offset, uint64_t len, uint64_t size) { return offset <= size && len <= size - offset; }

// The element count of a shape: every dimension non-negative, the product at most `limit`
// (default 2^40: larger than any tensor the harness can hold, far from 2^63). Zero when a dimension
// is zero, but the other dimensions' product must still be within the limit: readers multiply
// subsets of a shape (row counts, strides) on their own, and those products must not wrap.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;
template <class Dims> int64_t numel(const Dims& dims, int64_t limit = kMaxElements) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : dims) {
    if (d < 0) fail("negative dimension {}", d);
    if (d == 0) {
      zero = true;
      continue;
    }
    if (n > limit / d) fail("{} elements or more: larger than the limit of {}", n > 0 ? n : d, limit);
    n *= d;
  }
  return zero ? 0 : n;
}

}  // namespace ts::checked
