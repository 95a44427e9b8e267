#pragma once
// Every OpenCL call's status turned into a ts::Error naming the call and the code (CL_INVALID_...).
#include <CL/cl.h>

#include "core/error.h"

namespace ts::ocl {

const char* cl_error_name(cl_int code);

inline void cl_check(cl_int code, const char* call) {
  if (code != CL_SUCCESS) fail("OpenCL: {} failed: {} ({})", call, cl_error_name(code), code);
}

}  // namespace ts::ocl

// CL_CHECK(clFinish(q)): the call's text becomes the error message.
#define CL_CHECK(call) ::ts::ocl::cl_check((call), #call)
