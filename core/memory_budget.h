#pragma once
// The memory a case may ask for. A few bytes of metadata can declare terabytes of tensors (gemm with
// m = n = 65536 and k = 1 asks for a 16 GiB output), so every allocation a file drives is weighed
// against a budget first and a case over it is refused with a one-line Error, before anything is
// allocated. The budget: TOUCHSTONE_MEMORY_BUDGET (bytes, or with a K, M, G or T suffix: powers of
// 1024), else a quarter of physical memory (the harness holds a few copies of a case at once: the
// inputs, a working set, the expected outputs).
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace ts {

struct TensorDecl;
struct Problem;

uint64_t memory_budget();
// Parses a budget as TOUCHSTONE_MEMORY_BUDGET spells it ("4G", "512M", "1000000"); an Error otherwise.
uint64_t parse_byte_count(std::string_view s);
// Bytes a host tensor of this shape takes (data and its two guard zones); an Error when the shape is
// too large to count.
uint64_t tensor_footprint(DType dt, const Shape& shape);
uint64_t decls_footprint(const std::vector<TensorDecl>& decls);
// An Error "<what> need N bytes, more than the memory budget of B bytes (TOUCHSTONE_MEMORY_BUDGET)"
// when bytes > memory_budget().
void check_memory_budget(uint64_t bytes, std::string_view what);

// The work a case may ask for. A file of a few kilobytes can ask for hours of compute (a 20 KB GPTQ
// layer with m = 2^20 rows is 10^11 operations of the reference's scalar double loops), so a case is
// weighed in operations (its cost model's FLOPs plus bytes moved) before the reference or a backend
// runs it, and one over the budget is refused with the figures. The budget: TOUCHSTONE_WORK_BUDGET
// (operations, or with a K, M, G or T suffix: powers of 1000), else 2^34 (1.7e10: some tens of
// seconds of the reference, thirty times the largest conformance case).
inline constexpr uint64_t kDefaultWorkBudget = uint64_t{1} << 34;
uint64_t work_budget();
uint64_t parse_operation_count(std::string_view s);
double case_operations(const Problem& pr);
// An Error "<op> (<params>): the case asks for N operations (F FLOPs + B bytes moved ...), more than
// the work budget of W operations (...)" when case_operations(pr) > work_budget().
void check_work_budget(const Problem& pr);

}  // namespace ts
