// The ggml tensor types a GGUF file can name (ggml.h, enum ggml_type) with their block sizes
// (ggml.c, type_traits), and the GGUF metadata value types. Ids ggml has retired (4, 5: Q4_2, Q4_3;
// 31-33 and 36-38: the repacked Q4_0_4_4 ... IQ4_NL_8_8) are unknown, as they are to ggml.
#include <array>

#include "core/gguf.h"

namespace ts::gguf {

namespace {

// The types touchstone implements, from core/kinds.inc (the kinds' one table).
constexpr TypeInfo kImplemented[] = {
#define TS_K(NAME, num, id, elems, bytes, ...) {id, #NAME, elems, bytes, QuantKind::NAME},
    TS_QUANT_KINDS(TS_K)
#undef TS_K
};

// The types ggml defines that touchstone does not implement: known (a file naming one is refused by
// name), with their block sizes so a file's tensor table still reads.
constexpr TypeInfo kOthers[] = {
    {6, "Q5_0", 32, 22, {}},
    {7, "Q5_1", 32, 24, {}},
    {9, "Q8_1", 32, 36, {}},
    {10, "Q2_K", 256, 84, {}},
    {11, "Q3_K", 256, 110, {}},
    {15, "Q8_K", 256, 292, {}},
    {16, "IQ2_XXS", 256, 66, {}},
    {17, "IQ2_XS", 256, 74, {}},
    {18, "IQ3_XXS", 256, 98, {}},
    {19, "IQ1_S", 256, 50, {}},
    {20, "IQ4_NL", 32, 18, {}},
    {21, "IQ3_S", 256, 110, {}},
    {22, "IQ2_S", 256, 82, {}},
    {23, "IQ4_XS", 256, 136, {}},
    {24, "I8", 1, 1, {}},
    {25, "I16", 1, 2, {}},
    {26, "I32", 1, 4, {}},
    {27, "I64", 1, 8, {}},
    {28, "F64", 1, 8, {}},
    {29, "IQ1_M", 256, 56, {}},
    {34, "TQ1_0", 256, 54, {}},
    {35, "TQ2_0", 256, 66, {}},
    {39, "MXFP4", 32, 17, {}},
};

}  // namespace

const TypeInfo* type_info(uint32_t id) {
  for (const TypeInfo& t : kImplemented)
    if (t.id == id) return &t;
  for (const TypeInfo& t : kOthers)
    if (t.id == id) return &t;
  return nullptr;
}

std::string_view value_type_name(ValueType t) {
  static constexpr std::array<std::string_view, 13> kNames = {"UINT8", "INT8", "UINT16", "INT16", "UINT32",
                                                              "INT32", "FLOAT32", "BOOL", "STRING", "ARRAY",
                                                              "UINT64", "INT64", "FLOAT64"};
  const auto i = static_cast<uint32_t>(t);
  return i < kNames.size() ? kNames[i] : "?";
}

}  // namespace ts::gguf
