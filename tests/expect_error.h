#pragma once
// Bad-input tests: `fn` must throw ts::Error whose message is one line and contains `needle`.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace ts {

inline void expect_error(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "not one line: " << e.what();
    return;
  }
  ADD_FAILURE() << "no Error; expected one mentioning \"" << needle << "\"";
}

}  // namespace ts
