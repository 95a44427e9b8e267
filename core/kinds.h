#pragma once
// Enum parameters: the weight kinds of the quant and moe families and the KV-cache element types of
// the kv family. Each is parsed and written by name ("kind": "Q4_K"), so case files, case names and
// preset names read the way the ecosystem spells them. core/params.h reads them through EnumNames.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/dtype.h"
#include "core/kinds.inc"

namespace ts {

// The GGUF block kinds touchstone implements, plus plain weights (a moe op's experts may be F32,
// F16 or BF16 in the case's dtype). Names are ggml's type names; numbers, block sizes and field
// offsets are core/kinds.inc's, which the kernels expand too.
enum class QuantKind {
#define TS_K(NAME, num, id, elems, bytes, d, m, scales, qh, qs) NAME = num,
  TS_QUANT_KINDS(TS_K)
#undef TS_K
};

// KV-cache element types (docs/catalog.md, "Family kv"): F8_E4M3 is e4m3fn, I8 carries a scale per token.
enum class KvDtype {
#define TS_K(NAME, num, bytes, scaled, code_max) NAME = num,
  TS_KV_DTYPES(TS_K)
#undef TS_K
};

// The attention engines' view modes (core/kinds.inc): how a work group finds its sequence, and where
// a sequence's K/V rows live. The backends' engines take them as launch arguments.
enum class SeqMode : uint32_t {
#define TS_K(NAME, num) NAME = num,
  TS_SEQ_MODES(TS_K)
#undef TS_K
};
enum class KvAddr : uint32_t {
#define TS_K(NAME, num) NAME = num,
  TS_KV_ADDRS(TS_K)
#undef TS_K
};
// Where a RoPE writer puts its head vectors (core/kinds.inc's TS_POOL_DESTS).
enum class PoolDest : uint32_t {
#define TS_K(NAME, num) NAME = num,
  TS_POOL_DESTS(TS_K)
#undef TS_K
};

namespace kinds_detail {
// A list's numbers are its order, so the enums above, their name tables and the kernels' constants
// agree on every value.
template <size_t N> constexpr bool numbered_in_order(const int (&nums)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (nums[i] != static_cast<int>(i)) return false;
  return true;
}
#define TS_K(NAME, num, ...) num,
constexpr int kQuantNums[] = {TS_QUANT_KINDS(TS_K)};
constexpr int kKvNums[] = {TS_KV_DTYPES(TS_K)};
constexpr int kSeqNums[] = {TS_SEQ_MODES(TS_K)};
constexpr int kAddrNums[] = {TS_KV_ADDRS(TS_K)};
constexpr int kDestNums[] = {TS_POOL_DESTS(TS_K)};
#undef TS_K
static_assert(numbered_in_order(kSeqNums) && numbered_in_order(kAddrNums) && numbered_in_order(kDestNums),
              "core/kinds.inc: modes are numbered 0, 1, ...");
static_assert(numbered_in_order(kQuantNums), "core/kinds.inc: TS_QUANT_KINDS must number its rows 0, 1, ...");
static_assert(numbered_in_order(kKvNums), "core/kinds.inc: TS_KV_DTYPES must number its rows 0, 1, ...");
}  // namespace kinds_detail

// A weight kind's row of core/kinds.inc: its GGUF type id, block size in values and bytes, and the
// byte offsets of its fields within a block (-1: the kind has no such field).
struct QuantKindRow {
  QuantKind kind;
  uint32_t gguf_id;
  int64_t block_elems, block_bytes;
  int16_t d, m, scales, qh, qs;
};
inline constexpr QuantKindRow kQuantKindRows[] = {
#define TS_K(NAME, num, id, elems, bytes, d, m, scales, qh, qs) {QuantKind::NAME, id, elems, bytes, d, m, scales, qh, qs},
    TS_QUANT_KINDS(TS_K)
#undef TS_K
};
constexpr const QuantKindRow& kind_row(QuantKind k) { return kQuantKindRows[static_cast<size_t>(k)]; }
// GGUF block kinds (Q4_0 .. Q6_K), as opposed to the plain F32 / F16 / BF16.
constexpr bool has_blocks(QuantKind k) { return static_cast<int>(k) < TS_QUANT_FIRST_PLAIN; }
static_assert([] {
  for (const QuantKindRow& r : kQuantKindRows)
    if (has_blocks(r.kind) != (r.block_elems > 1)) return false;
  return true;
}(), "core/kinds.inc: TS_QUANT_FIRST_PLAIN must split the block kinds from the plain ones");
// The GGUF block kinds in the list's order (docs/catalog.md's).
constexpr std::array<QuantKind, TS_QUANT_FIRST_PLAIN> block_kinds() {
  std::array<QuantKind, TS_QUANT_FIRST_PLAIN> a{};
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<QuantKind>(i);
  return a;
}

// A KV pool's row of core/kinds.inc.
struct KvDtypeRow {
  KvDtype kind;
  int64_t elem_bytes;
  bool scaled;
  float code_max;
};
inline constexpr KvDtypeRow kKvDtypeRows[] = {
#define TS_K(NAME, num, bytes, scaled, code_max) {KvDtype::NAME, bytes, scaled != 0, code_max},
    TS_KV_DTYPES(TS_K)
#undef TS_K
};
constexpr const KvDtypeRow& kind_row(KvDtype k) { return kKvDtypeRows[static_cast<size_t>(k)]; }
// The one answer to "does this pool carry scales": I8 and F8_E4M3 carry one F32 scale per (block, kv
// head, slot); F16 and BF16 hold converted values.
constexpr bool has_scales(KvDtype k) { return kind_row(k).scaled; }

// The name table of an enum parameter: every value with its spelling, in declaration order.
template <class E> struct EnumNames;

template <> struct EnumNames<QuantKind> {
  static constexpr std::string_view kWhat = "weight kind";
  static constexpr std::pair<QuantKind, std::string_view> kValues[] = {
#define TS_K(NAME, ...) {QuantKind::NAME, #NAME},
      TS_QUANT_KINDS(TS_K)
#undef TS_K
  };
};

template <> struct EnumNames<KvDtype> {
  static constexpr std::string_view kWhat = "KV-cache dtype";
  static constexpr std::pair<KvDtype, std::string_view> kValues[] = {
#define TS_K(NAME, ...) {KvDtype::NAME, #NAME},
      TS_KV_DTYPES(TS_K)
#undef TS_K
  };
};

template <class E>
concept NamedEnum = requires { EnumNames<E>::kValues; };

template <NamedEnum E> constexpr std::string_view enum_name(E v) {
  for (const auto& [e, n] : EnumNames<E>::kValues)
    if (e == v) return n;
  return "?";
}

template <NamedEnum E> std::optional<E> enum_from_name(std::string_view s) {
  for (const auto& [e, n] : EnumNames<E>::kValues)
    if (n == s) return e;
  return std::nullopt;
}

// "Q4_0|Q4_1|...": the valid names, for errors and `touchstone cases`.
template <NamedEnum E> std::string enum_choices() {
  std::string s;
  for (const auto& [e, n] : EnumNames<E>::kValues) {
    if (!s.empty()) s += '|';
    s += n;
  }
  return s;
}

// Plain weight kinds are stored in their float dtype; GGUF kinds as U8 block bytes.
inline DType storage_dtype(QuantKind k) {
  switch (k) {
    case QuantKind::F32: return DType::F32;
    case QuantKind::F16: return DType::F16;
    case QuantKind::BF16: return DType::BF16;
    default: return DType::U8;
  }
}

// A KV pool's element dtype (I8 pools hold I8 values; their scales are F32 tensors of their own).
inline DType storage_dtype(KvDtype k) {
  switch (k) {
    case KvDtype::F16: return DType::F16;
    case KvDtype::BF16: return DType::BF16;
    case KvDtype::F8_E4M3: return DType::F8_E4M3;
    case KvDtype::I8: return DType::I8;
  }
  return DType::F16;
}

}  // namespace ts
