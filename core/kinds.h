#pragma once
// Enum parameters: the weight kinds of the quant and moe families and the KV-cache element types of
// the kv family. Each is parsed and written by name ("kind": "Q4_K"), so case files, case names and
// preset names read the way the ecosystem spells them. core/params.h reads them through EnumNames.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/dtype.h"

namespace ts {

// The GGUF block kinds touchstone implements, plus plain weights (a moe op's experts may be F32,
// F16 or BF16 in the case's dtype). Names are ggml's type names.
enum class QuantKind { Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K, F32, F16, BF16 };

// KV-cache element types (OPS.md, "Family kv"): F8_E4M3 is e4m3fn, I8 carries a scale per token.
enum class KvDtype { F16, BF16, F8_E4M3, I8 };

// The name table of an enum parameter: every value with its spelling, in declaration order.
template <class E> struct EnumNames;

template <> struct EnumNames<QuantKind> {
  static constexpr std::string_view kWhat = "weight kind";
  static constexpr std::array<std::pair<QuantKind, std::string_view>, 9> kValues{{
      {QuantKind::Q4_0, "Q4_0"}, {QuantKind::Q4_1, "Q4_1"}, {QuantKind::Q8_0, "Q8_0"},
      {QuantKind::Q4_K, "Q4_K"}, {QuantKind::Q5_K, "Q5_K"}, {QuantKind::Q6_K, "Q6_K"},
      {QuantKind::F32, "F32"},   {QuantKind::F16, "F16"},   {QuantKind::BF16, "BF16"},
  }};
};

template <> struct EnumNames<KvDtype> {
  static constexpr std::string_view kWhat = "KV-cache dtype";
  static constexpr std::array<std::pair<KvDtype, std::string_view>, 4> kValues{{
      {KvDtype::F16, "F16"}, {KvDtype::BF16, "BF16"}, {KvDtype::F8_E4M3, "F8_E4M3"}, {KvDtype::I8, "I8"}}};
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
