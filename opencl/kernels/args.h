// An engine's scalar arguments as one struct, declared once by a field list that the host (C++) and
// the kernel (OpenCL C) both expand, so neither restates the other's order. A list is a macro
// LIST(I, F) naming each field once: I(name) a 32-bit signed integer, F(name) a 32-bit float. Only
// 4-byte scalars, so the struct has no padding on either side (OpenCL C aligns a struct's members as
// C does, and no member needs more than 4 bytes); args_probe.cl lets a test ask the device compiler
// for every field's offset and size and compare them with the host's.
//
// The planner packs the struct once per dispatch into a read-only buffer; the kernel takes it as one
// `__constant` pointer named `args` and reads every field once, into a private constant of the
// field's name (TS_ARGS_READ), so the kernel body reads as it did with positional arguments.
#ifndef TS_OPENCL_ARGS_H
#define TS_OPENCL_ARGS_H

#ifdef __OPENCL_C_VERSION__

#define TS_ARG_DEV_I(n) int n;
#define TS_ARG_DEV_F(n) float n;
#define TS_ARGS_STRUCT(Name, LIST) typedef struct { LIST(TS_ARG_DEV_I, TS_ARG_DEV_F) } Name;
// Every field into a private constant of its name (the compiler drops those a variant never reads).
#define TS_ARG_READ_I(n) const int n = args->n;
#define TS_ARG_READ_F(n) const float n = args->n;
#define TS_ARGS_READ(LIST) LIST(TS_ARG_READ_I, TS_ARG_READ_F)

#else

#include <cstddef>
#include <cstdint>

namespace ts::ocl {
// A field as the host lays it out (the offset tests compare it with the device compiler's).
struct ArgField {
  const char* name;
  size_t offset, size;
  bool is_float;
};
// v as a 32-bit argument; an Error naming the field when it does not fit.
int32_t arg_i32(int64_t v, const char* field);
}  // namespace ts::ocl

#define TS_ARG_DEV_I(n) int32_t n;
#define TS_ARG_DEV_F(n) float n;
// The planner's form (Name##In): 64-bit integers, so a planner assigns its own int64_t values, and
// pack() narrows them checked, field by field.
#define TS_ARG_IN_I(n) int64_t n = 0;
#define TS_ARG_IN_F(n) float n = 0;
#define TS_ARG_PACK_I(n) out.n = ::ts::ocl::arg_i32(in.n, #n);
#define TS_ARG_PACK_F(n) out.n = in.n;
#define TS_ARGS_STRUCT(Name, LIST)                              \
  namespace ts::ocl {                                           \
  struct Name {                                                 \
    LIST(TS_ARG_DEV_I, TS_ARG_DEV_F)                            \
  };                                                            \
  struct Name##In {                                             \
    LIST(TS_ARG_IN_I, TS_ARG_IN_F)                              \
  };                                                            \
  inline Name pack(const Name##In& in) {                        \
    Name out{};                                                 \
    LIST(TS_ARG_PACK_I, TS_ARG_PACK_F)                          \
    return out;                                                 \
  }                                                             \
  }
// The host's layout of Name, field by field in list order: TS_ARG_FIELDS(Name, LIST) is an
// initializer list of ArgField.
#define TS_ARG_FIELD_I_(Name, n) ::ts::ocl::ArgField{#n, offsetof(Name, n), sizeof(Name::n), false},
#define TS_ARG_FIELD_F_(Name, n) ::ts::ocl::ArgField{#n, offsetof(Name, n), sizeof(Name::n), true},

#endif

#endif
