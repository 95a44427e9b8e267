// The step tests: one launch prepared once, then run on several steps of the same problem, each
// step's input values written into the same buffers (Launch::upload_inputs): new lengths, block tables,
// ids, positions and data of the same shapes (the generator's per-step state redrawn by
// Op::next_step, every value from a new seed). Each step must match the reference for the values it
// ran on, under the same tolerance and checks as the matrix. A plan that baked a tensor's values in at
// prepare (an item table built from the lengths, a grid sized by the longest sequence) runs the first
// step right and a later one wrong, which is what these catch: a graph recorded once and replayed with
// new per-step state needs plans that depend on shapes and parameters only.
#include "conformance/steps.h"

#include <cstring>

#include <gtest/gtest.h>

#include "conformance/check.h"
#include "conformance/known_failures.h"
#include "core/collective.h"

namespace ts {
namespace {

// Steps per test: the first as generated, then two redrawn.
constexpr int kSteps = 3;

// Step `step`'s seed: the case's for the first, a distinct one for each later step.
uint64_t step_seed(uint64_t seed, int step) { return step == 0 ? seed : seed ^ (0x9e3779b97f4a7c15ull * step); }

// Writes `c`'s inputs and in-outs into `io` byte for byte (the tensors the launch was prepared on) and
// poisons its outputs, so that a step that leaves an output unwritten shows up.
void write_step(const Case& c, TensorMap& io) {
  for (const auto& d : c.decls) {
    Tensor& dst = io.at(d.name);
    if (d.role == Role::Out) {
      poison(dst);
      continue;
    }
    const Tensor& src = c.tensors.at(d.name);
    check(src.storage_bytes() == dst.storage_bytes(), "step tensor '{}' is not of the prepared size", d.name);
    std::memcpy(dst.storage(), src.storage(), src.storage_bytes());
  }
}

// The same declarations (names, roles, dtypes, shapes): another step of the prepared problem.
void check_same_shapes(const Problem& prepared, const Problem& step) {
  check(prepared.decls.size() == step.decls.size(), "a step declares {} tensors, the prepared problem {}",
        step.decls.size(), prepared.decls.size());
  for (size_t i = 0; i < step.decls.size(); ++i) {
    const TensorDecl &a = prepared.decls[i], &b = step.decls[i];
    check(a.name == b.name && a.role == b.role && a.dtype == b.dtype && a.shape == b.shape,
          "a step's tensor '{}' {} differs from the prepared problem's '{}' {}", b.name, shape_str(b.shape), a.name,
          shape_str(a.shape));
  }
}

// Judges the outputs of one step as check_case does (judge_outputs: each expected output under its
// tolerance, the backend's own where it states one, unwritten elements skipped), guard zones intact.
Verdict judge_step(Backend& b, const Case& c, const TensorMap& io) {
  Verdict v = judge_outputs(c, views(io), &b);
  for (const auto& name : c.output_names())
    if (!io.at(name).guards_intact()) {
      v.pass = false;
      v.problem = fmt::format("write outside tensor '{}' (guard zone overwritten)", name);
    }
  return v;
}

class StepsTest : public ::testing::Test {
 public:
  StepsTest(const Options& o, std::string test_name, std::string backend, const CaseEntry& e)
      : o_(o), name_(std::move(test_name)), backend_(std::move(backend)), op_(*e.op), spec_(*e.spec), dt_(e.dtype),
        seed_(e.seed()) {}

  void TestBody() override {
    Backend& b = backend(backend_);
    if (!b.availability().ok) GTEST_SKIP() << "backend " << backend_ << " unavailable: " << b.availability().detail;
    op_.check_params(spec_.params);
    const Problem pr = make_problem(op_, spec_.params, dt_);
    if (auto s = b.supports(pr); !s.ok) GTEST_SKIP() << "unsupported: " << s.reason;
    // A case the matrix already lists as failing fails its steps too: its own test reports it.
    if (const KnownFailure* k = find_known_failure(b.name(), op_.name(), spec_.name, std::string(dtype_name(dt_))))
      GTEST_SKIP() << "known failure of the case itself: " << k->reason;
    const uint64_t seed = seed_ ^ o_.seed;
    std::cout << fmt::format("[ SEED     ] {} seed={}\n", name_, seed);
    Case c = generate_case(pr, seed);
    TensorMap io = working_set(c);
    std::unique_ptr<Launch> launch;
    try {
      launch = b.prepare(pr, io);
    } catch (const Error& e) {
      FAIL() << "prepare: " << e.what();
    }
    for (int step = 0; step < kSteps; ++step) {
      const uint64_t s = step_seed(seed, step);
      try {
        if (step > 0) {
          const Problem next = make_problem(op_, op_.next_step(spec_.params, s), dt_);
          check_same_shapes(pr, next);
          c = generate_case(next, s);
          write_step(c, io);
          launch->upload_inputs();
        }
        launch->execute();
        launch->finish();
        gather_rank_outputs(pr, io);
      } catch (const Error& e) {
        FAIL() << fmt::format("step {} (seed {}): {}", step, s, e.what());
      }
      const Verdict v = judge_step(b, c, io);
      if (!v.pass) {
        ADD_FAILURE() << fmt::format(
            "backend={} op={} case={} dtype={}: step {} of one prepared launch (seed {}) differs from the "
            "reference for its own values\n  step params: {}\n{}",
            b.name(), op_.name(), spec_.name, dtype_name(dt_), step, s, params_str(op_.to_map(c.params)),
            v.describe(true));
        return;
      }
    }
  }

 private:
  const Options& o_;
  std::string name_, backend_;
  const Op& op_;
  const CaseSpec& spec_;
  DType dt_;
  uint64_t seed_;
};

}  // namespace

void register_steps_test(const Options& o, const std::string& backend_name, const CaseEntry& e) {
  const std::string suite = e.test_suite(backend_name), test = e.name() + "/steps", full = suite + "." + test;
  ::testing::RegisterTest(suite.c_str(), test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [=, &o]() -> ::testing::Test* { return new StepsTest(o, full, backend_name, e); });
}

}  // namespace ts
