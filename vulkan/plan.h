#pragma once
// What an op becomes on the device: a list of dispatches (SPIR-V variant, the tensors bound to its
// bindings in order, push constants, work-group counts), run in order with a barrier between each.
// One planner per op, registered per shader family (plan_<family>.cpp).
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "core/backend.h"
#include "core/op.h"
#include "core/ops/op_refs.h"
#include "vulkan/runtime/runtime.h"
#include "vulkan/runtime/shader_table.h"

namespace ts::vk {

// A tensor bound to one binding: the whole data, or a window of it (bytes from the data's start),
// for tensors above the device's maxStorageBufferRange. Or a scratch buffer: device memory the
// launch allocates (no guards, never downloaded) for results passed between its dispatches.
struct Binding {
  std::string tensor;              // or the scratch buffer's name (a scratch name is never a tensor's)
  uint64_t offset = 0, range = 0;  // range 0: to the end of the data
  uint64_t scratch = 0;            // > 0: a scratch buffer of this many bytes (shared by name)
  Binding(std::string t) : tensor(std::move(t)) {}
  Binding(const char* t) : tensor(t) {}
  Binding(std::string t, uint64_t off, uint64_t len) : tensor(std::move(t)), offset(off), range(len) {}
  static Binding scratch_buffer(std::string name, uint64_t bytes) {
    Binding b(std::move(name));
    b.scratch = bytes;
    return b;
  }
};

struct Dispatch {
  std::string shader;             // variant name, e.g. "norms_rms_f16_sg" (Target::variant)
  std::vector<Binding> bindings;  // binding i = bindings[i]
  std::vector<uint32_t> push;         // push-constant words (uints and float bits)
  // Specialization constants: word i is the value of the shader's constant_id i (none: the
  // shader's defaults). One pipeline is built per (variant, spec words).
  std::vector<uint32_t> spec;
  std::array<uint32_t, 3> groups{1, 1, 1};
};

// What a planner may depend on besides the case: the storage dtype and the device's features.
struct Target {
  DType dtype = DType::F32;
  bool subgroups = false;
  uint32_t max_groups[3] = {65535, 65535, 65535};
  // Work groups worth launching for grid-stride kernels: CPU drivers (lavapipe) pay a large setup
  // cost per group, so there a few fat groups beat many thin ones; GPUs get the device limit.
  uint32_t group_cap = 65535;
  // Work groups that keep the whole device busy when each has much to do (attention's key split).
  uint32_t fill_groups = 256;
  uint64_t max_range = 1ull << 27;  // maxStorageBufferRange
  uint64_t offset_align = 256;      // minStorageBufferOffsetAlignment
  uint64_t max_shared = 16384;      // maxComputeSharedMemorySize
  uint32_t subgroup_size = 1;       // the device's (VkPhysicalDeviceSubgroupProperties)
  bool cpu = false;                 // a CPU driver (lavapipe): few fat work groups
  bool int_dot = false;             // packed 4 x int8 dot products (VK_KHR_shader_integer_dot_product)

  // Rows [begin, begin + count) windows of a [rows, row_bytes] tensor, each within max_range and
  // starting at an aligned offset; one window when the tensor fits. Error when no row split works.
  std::vector<std::pair<int64_t, int64_t>> row_windows(int64_t rows, uint64_t row_bytes) const;

  // Kernel::norms_rms -> "norms_rms_bf16_sg": this dtype's variant, the subgroup build where the
  // device has subgroups and the kernel list (vulkan/kernels.inc) says the kernel has one.
  std::string variant(Kernel k) const;
};

// The decode GEMV's shape on this device for rows of `chunks` 16-byte chunks
// (shaders/gemv_quant_m1.comp): invocations and rows per work group (mode 1: per subgroup), how a row
// block is shared and how many chunks a lane loads at once. Printed in the backend's description
// (for the 448-chunk rows of a Q4_K k = 14336 decode), so every benchmark run states it.
struct GemvShape {
  uint32_t wg = 64, rows = 4;
  uint32_t groups = 0;  // a cap on the groups (each then strides over row blocks); 0: one per block
  uint32_t mode = 0;    // 0: rows shared by the work group; 1: rows per subgroup (needs subgroups)
  uint32_t unroll = 1;  // mode 1: chunks a lane loads before it uses them (1 .. 4)
  uint32_t rows_per_group(const Target& tg) const { return mode == 1 ? rows * (wg / tg.subgroup_size) : rows; }
};
GemvShape gemv_shape(const Target& tg, int64_t chunks);
// Whether a GGUF product of m activation rows and `outputs` values per row takes the int8 decode GEMV
// (shaders/quantize_q8.comp, then gemv_quant_m1.comp as gemv_quant_q8): asked for by
// TOUCHSTONE_VULKAN_GEMV_ROUTE=int8 (the F32 GEMV is the default), a decode (m = 1) with enough
// outputs for the int8 route's NMSE bound (core/quant/int8_route.h), on a device with packed integer
// dot products.
bool gemv_int8(const Target& tg, int64_t m, int64_t outputs);

// Push-constant words built field by field, in the order of the shader's block.
class Push {
 public:
  Push& u(int64_t v);  // Error if it does not fit in 32 bits
  Push& f(float v) {
    uint32_t w;
    std::memcpy(&w, &v, 4);
    words_.push_back(w);
    return *this;
  }
  std::vector<uint32_t> words() const { return words_; }

 private:
  std::vector<uint32_t> words_;
};

uint32_t ceil_div(int64_t a, int64_t b);
// Work groups covering `n` items of `per_group` each, capped at the device limit (kernels loop).
uint32_t groups_for(int64_t n, int64_t per_group, uint32_t limit = 65535);

// A 2-D grid for kernels that stride over rows in y and over WG-wide column chunks in x, within
// the group cap in total.
std::array<uint32_t, 3> grid_2d(int64_t rows, int64_t cols, int64_t wg, const Target& tg);

// What a planner knows of the case's tensors: each one's shape and dtype (the problem's declarations),
// never its values. A plan depends on shapes and parameters only, so the Launch runs it again after new
// values were written into the same buffers (Launch::upload_inputs); what depends on values (lengths,
// tables, ids, positions) is decided by the shaders on the device, in grids sized from the parameters.
class Decls {
 public:
  explicit Decls(const Problem& pr) : pr_(pr) {}
  const TensorDecl& at(const std::string& name) const;  // Error when the op declares none of that name
  bool has(const std::string& name) const { return pr_.decl(name) != nullptr; }
  uint64_t nbytes(const std::string& name) const {
    return static_cast<uint64_t>(shape_numel(at(name).shape)) * dtype_size(at(name).dtype);
  }

 private:
  const Problem& pr_;
};

using Planner = std::function<std::vector<Dispatch>(const Params&, const Decls&, const Target&)>;
// A planner's own tolerance for the plans it makes on this target (Backend::tolerance), for a kernel
// that trades exactness for speed by design; nullopt: the op's.
using PlanTolerance = std::function<std::optional<Tolerance>(const Problem&, const Target&, const TensorMap& inputs)>;
// Per op: its planner, and optionally which of its problems it takes (empty: every one the
// backend's dtype gate lets through) and its own tolerance. Registered against the op's identity
// (core/ops/op_refs.h).
struct PlannerEntry {
  Planner plan;
  std::function<Support(const Problem&)> supports;
  PlanTolerance tolerance;
};
using PlannerTable = std::map<std::string, PlannerEntry, std::less<>>;

template <class P>
void add_planner(PlannerTable& t, OpRef<P> op,
                 std::type_identity_t<std::function<std::vector<Dispatch>(const P&, const Decls&, const Target&)>> f,
                 std::function<Support(const Problem&)> supports = {}, PlanTolerance tolerance = {}) {
  t[std::string(op.name)] = {
      [f = std::move(f)](const Params& p, const Decls& io, const Target& tg) { return f(p.as<P>(), io, tg); },
      std::move(supports), std::move(tolerance)};
}

// Each shader family registers the ops it implements.
void add_gemm_planners(PlannerTable& t);         // vulkan/dense/gemm.cpp
void add_norm_planners(PlannerTable& t);         // vulkan/dense/norms.cpp
void add_elementwise_planners(PlannerTable& t);  // vulkan/dense/elementwise.cpp
void add_layout_planners(PlannerTable& t);       // vulkan/dense/layout.cpp
void add_rope_planners(PlannerTable& t);         // vulkan/dense/rope.cpp
void add_paged_split_planners(PlannerTable& t);  // vulkan/attention/paged_split.cpp
void add_attention_planners(PlannerTable& t);    // vulkan/attention/attention.cpp
void add_paged_planners(PlannerTable& t);        // vulkan/attention/paged_attention.cpp
void add_kv_planners(PlannerTable& t);           // vulkan/attention/kv_append.cpp
void add_argmax_planners(PlannerTable& t);       // vulkan/dense/argmax.cpp
void add_quant_planners(PlannerTable& t);        // vulkan/quant/quant_gemm.cpp
void add_moe_route_planners(PlannerTable& t);    // vulkan/moe/moe_route.cpp
void add_moe_combine_planners(PlannerTable& t);  // vulkan/moe/moe_combine.cpp
void add_moe_expert_planners(PlannerTable& t);   // vulkan/moe/moe_experts.cpp

}  // namespace ts::vk
