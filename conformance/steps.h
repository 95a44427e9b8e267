#pragma once
// The step tests (steps.cpp): a launch prepared once and run on several steps of new input values.
#include <string>

#include "conformance/options.h"
#include "core/case_list.h"

namespace ts {

// Registers `<backend>/<op>.<case>/<dtype>/steps` beside the matrix's test of that case.
void register_steps_test(const Options& o, const std::string& backend_name, const CaseEntry& e);

}  // namespace ts
