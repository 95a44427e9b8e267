// The OpenCL engines' argument structs (opencl/kernels/args.h): the host and the device compiler lay
// out every field alike. Each struct is filled on the host, field by field by name with distinct
// values, and its probe kernel (args_probe.cl) reports, in its list's order, every field's name,
// offset, size and the value it reads by that name; a field named, placed, sized or typed differently
// on the two sides fails here.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "opencl/kernels/attention_args.h"
#include "opencl/kernels/kv_append_args.h"
#include "opencl/kernels/moe_gemv_args.h"
#include "opencl/kernels/quant_gemv_args.h"
#include "opencl/kernels/rope_args.h"
#include "opencl/runtime/runtime.h"

namespace ts::ocl {
namespace {

// A field's host layout and the 32 bits the host wrote there.
struct Expected {
  ArgField f;
  int32_t bits;
};

// Fills field k with 1000 + k (integers) or k + 0.25 (floats): distinct, so a field read from a
// neighbour's place shows.
#define TS_EXPECT_I(n)                                                               \
  {                                                                                  \
    s.n = 1000 + int32_t(fields.size());                                             \
    fields.push_back({{#n, offsetof(S, n), sizeof(S::n), false}, s.n});              \
  }
#define TS_EXPECT_F(n)                                                               \
  {                                                                                  \
    s.n = float(fields.size()) + 0.25f;                                              \
    int32_t b;                                                                       \
    std::memcpy(&b, &s.n, 4);                                                        \
    fields.push_back({{#n, offsetof(S, n), sizeof(S::n), true}, b});                 \
  }

// FNV-1a, as the probe hashes a field's name.
int32_t name_hash(const char* s) {
  uint32_t h = 2166136261u;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 16777619u;
  return static_cast<int32_t>(h);
}

std::unique_ptr<Runtime> open_runtime(std::string* why) {
  try {
    return std::make_unique<Runtime>();
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
}

template <class S>
void probe(Runtime& rt, const std::string& kernel, const S& s, const std::vector<Expected>& fields) {
  cl_int rc = CL_SUCCESS;
  Mem in(clCreateBuffer(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof s, const_cast<S*>(&s), &rc));
  ASSERT_EQ(rc, CL_SUCCESS);
  std::vector<int32_t> got(4 * fields.size() + 1, -1);
  Mem out(clCreateBuffer(rt.context(), CL_MEM_WRITE_ONLY, got.size() * 4, nullptr, &rc));
  ASSERT_EQ(rc, CL_SUCCESS);
  Kernel k = rt.kernel("args_probe.cl", kernel, "");
  cl_mem a = in.get(), o = out.get();
  ASSERT_EQ(clSetKernelArg(k.get(), 0, sizeof a, &a), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(k.get(), 1, sizeof o, &o), CL_SUCCESS);
  const size_t one = 1;
  ASSERT_EQ(clEnqueueNDRangeKernel(rt.queue(), k.get(), 1, nullptr, &one, &one, 0, nullptr, nullptr), CL_SUCCESS);
  ASSERT_EQ(clEnqueueReadBuffer(rt.queue(), o, CL_TRUE, 0, got.size() * 4, got.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
  // Matched by name, so a field the device places elsewhere shows as that field's offset.
  for (size_t i = 0; i < fields.size(); ++i) {
    const int32_t* d = got.data() + 4 * i;
    const auto e = std::find_if(fields.begin(), fields.end(), [&](const Expected& x) { return name_hash(x.f.name) == d[0]; });
    ASSERT_NE(e, fields.end()) << kernel << ": the device's field " << i << " has a name the host's struct lacks";
    EXPECT_EQ(size_t(d[1]), e->f.offset) << kernel << ": offset of " << e->f.name << " (device vs host)";
    EXPECT_EQ(size_t(d[2]), e->f.size) << kernel << ": size of " << e->f.name << " (device vs host)";
    EXPECT_EQ(d[3], e->bits) << kernel << ": the device reads " << e->f.name << " from another place";
  }
  EXPECT_EQ(size_t(got.back()), sizeof(S)) << kernel << ": struct size";
}

class OpenclArgs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    rt_ = open_runtime(&why);
    if (!rt_) GTEST_SKIP() << "no OpenCL device: " << why;
  }
  std::unique_ptr<Runtime> rt_;
};

// One test per argument struct: every field set to a value of its own on the host, read back field by
// field by a kernel built from the same list (probe), so an offset or size the two sides disagree on
// fails by name.
#define TS_LAYOUT_TEST(Name, S_, LIST)           \
  TEST_F(OpenclArgs, Name) {                     \
    using S = S_;                                \
    S s{};                                       \
    std::vector<Expected> fields;                \
    LIST(TS_EXPECT_I, TS_EXPECT_F)               \
    probe(*rt_, "probe_" #S_, s, fields);        \
  }

TS_LAYOUT_TEST(AttentionLayoutAgrees, AttnArgs, TS_ATTN_ARGS)
TS_LAYOUT_TEST(NormRopeLayoutAgrees, NormRopeArgs, TS_NORM_ROPE_ARGS)
TS_LAYOUT_TEST(ExpertGemvLayoutAgrees, MoeGemvArgs, TS_MOE_GEMV_ARGS)
TS_LAYOUT_TEST(KvAppendLayoutAgrees, KvAppendArgs, TS_KV_APPEND_ARGS)
TS_LAYOUT_TEST(QuantGemvLayoutAgrees, QuantGemvArgs, TS_QUANT_GEMV_ARGS)
#undef TS_LAYOUT_TEST

}  // namespace
}  // namespace ts::ocl
