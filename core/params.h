#pragma once
// Op parameter structs with named fields. Each struct lists its fields once, in a visitor:
//
//   struct GemmParams {
//     int64_t m = 1, n = 1, k = 1;
//     template <class V> void fields(V& v) { v("m", m); v("n", n); v("k", k); }
//   };
//
// and that one list drives parsing from a case file's metadata (unknown, missing and unparsable
// values are Errors), writing metadata, printing a case, and the CLI's parameter listing.
// Optional fields are declared with v.optional("rotary_dim", rotary_dim): absent means "keep the
// struct's default" (0 for rotary_dim means head_dim, resolved by the op).
// Enum fields (core/kinds.h: QuantKind `kind`, KvDtype `kv_dtype`) are parsed and written by name;
// they also make up the case's variant ("kind=Q4_K"), the unit of support and of the coverage
// manifests.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/kinds.h"

namespace ts {

using ParamMap = std::map<std::string, std::string>;

namespace detail {

inline void parse_value(const std::string& name, const std::string& s, int64_t& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  check(ec == std::errc() && p == end, "parameter '{}': '{}' is not an integer", name, s);
}
inline void parse_value(const std::string& name, const std::string& s, float& out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, out);
  check(ec == std::errc() && p == end && std::isfinite(out), "parameter '{}': '{}' is not a finite number",
        name, s);
}
inline void parse_value(const std::string& name, const std::string& s, bool& out) {
  check(s == "true" || s == "false", "parameter '{}': '{}' is not true or false", name, s);
  out = s == "true";
}
template <NamedEnum E> void parse_value(const std::string& name, const std::string& s, E& out) {
  auto v = enum_from_name<E>(s);
  check(v.has_value(), "parameter '{}': '{}' is not a {} (one of {})", name, s, EnumNames<E>::kWhat,
        enum_choices<E>());
  out = *v;
}
inline std::string format_value(int64_t v) { return std::to_string(v); }
inline std::string format_value(float v) { return fmt::format("{}", v); }  // shortest round-trip
inline std::string format_value(bool v) { return v ? "true" : "false"; }
template <NamedEnum E> std::string format_value(E v) { return std::string(enum_name(v)); }

struct Reader {
  const ParamMap& in;
  std::set<std::string> seen;
  template <class T> void operator()(const char* name, T& field) {
    auto it = in.find(name);
    check(it != in.end(), "missing parameter '{}'", name);
    parse_value(name, it->second, field);
    seen.insert(name);
  }
  template <class T> void optional(const char* name, T& field) {
    auto it = in.find(name);
    if (it == in.end()) return;
    parse_value(name, it->second, field);
    seen.insert(name);
  }
};

struct Writer {
  ParamMap out;
  template <class T> void operator()(const char* name, const T& field) { out[name] = format_value(field); }
  // An optional field at its zero value means "the default" and is left out of the file.
  template <class T> void optional(const char* name, const T& field) {
    if (field != T{}) out[name] = format_value(field);
  }
};

// Names for listings: "m", "rotary_dim?" (optional), "kind=Q4_0|Q4_1|..." (an enum and its values).
struct Namer {
  std::vector<std::string> names;
  template <class T> static std::string describe(const char* name) {
    if constexpr (NamedEnum<T>) return std::string(name) + "=" + enum_choices<T>();
    return name;
  }
  template <class T> void operator()(const char* name, const T&) { names.push_back(describe<T>(name)); }
  template <class T> void optional(const char* name, const T&) { names.push_back(describe<T>(name) + "?"); }
};

// The enum fields of a case as "kind=Q4_K kv_dtype=I8": its variant.
struct VariantNamer {
  std::string out;
  template <class T> void operator()(const char* name, const T& v) {
    if constexpr (NamedEnum<T>) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, enum_name(v));
  }
  template <class T> void optional(const char* name, const T& v) { (*this)(name, v); }
};

}  // namespace detail

// Metadata keys that are not parameters.
inline bool is_reserved_key(const std::string& k) { return k == "op" || k == "seed" || k == "tier"; }

template <class P> P params_from_map(const ParamMap& m) {
  P p{};
  detail::Reader r{m, {}};
  p.fields(r);
  for (const auto& [k, v] : m)
    check(is_reserved_key(k) || r.seen.count(k), "unknown parameter '{}'", k);
  return p;
}

template <class P> ParamMap params_to_map(const P& p) {
  detail::Writer w;
  const_cast<P&>(p).fields(w);  // fields() is one list for reading and writing; the writer only reads
  return w.out;
}

template <class P> std::vector<std::string> param_names() {
  P p{};
  detail::Namer n;
  p.fields(n);
  return n.names;
}

// The case's variant: its enum fields, "kind=Q4_K" ("" for an op without enum parameters).
template <class P> std::string params_variant(const P& p) {
  detail::VariantNamer n;
  const_cast<P&>(p).fields(n);  // reads only
  return n.out;
}

// "m=1,n=4096,k=4096": the compact form printed with every case.
inline std::string params_str(const ParamMap& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace ts
