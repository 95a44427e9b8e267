// What the quant, paged, kv and moe families stand on, tested on a small op of this file's own
// (toy_pool_gather, not in the catalog) that uses all of it: enum parameters, a dtype rule per
// tensor, support decided per problem, per-output judging and slots that are not compared.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/expect_error.h"

#include "conformance/check.h"
#include "core/case_file.h"
#include "core/host_backend.h"
#include "core/ops/core_params.h"
#include "core/ops/describe.h"
#include "core/unsupported.h"
#include "reference/kernels.h"

namespace ts {
namespace {

using namespace describe;

// Gathers rows of a quantized pool into activations, and lists per row whether it was taken:
//   out[i, :] = pool[ids[i], :] * 0.5      (pool in kv_dtype, out in the activation dtype)
//   taken[e]  = number of ids equal to e; slots[e, j] = the j-th i with ids[i] == e, j < taken[e]
// Slots past taken[e] are left unwritten by definition (as moe's ids past tpe[e]).
struct ToyParams {
  int64_t rows = 1, dim = 1, n = 1;
  QuantKind kind = QuantKind::Q4_K;  // only names a variant here (the bytes tensor is plain U8)
  KvDtype kv_dtype = KvDtype::I8;
  template <class V> void fields(V& v) {
    v("rows", rows); v("dim", dim); v("n", n); v("kind", kind); v("kv_dtype", kv_dtype);
  }
};

int toy_validations = 0;  // validate_data calls: a case is validated once, however it is run

void toy_reference(const ToyParams& p, TensorMap& t) {
  const auto ids = to_indices(t.at("ids"));
  Tensor& out = t.at("out");
  const Tensor& pool = t.at("pool");
  for (int64_t i = 0; i < p.n; ++i)
    for (int64_t d = 0; d < p.dim; ++d) out.set(i * p.dim + d, pool.get(ids[i] * p.dim + d) * 0.5);
  Tensor& taken = t.at("taken");
  Tensor& slots = t.at("slots");
  for (int64_t e = 0; e < p.rows; ++e) taken.as<int32_t>()[e] = 0;
  for (int64_t i = 0; i < p.n; ++i) {
    int32_t& k = taken.as<int32_t>()[ids[i]];
    slots.as<int32_t>()[ids[i] * p.n + k++] = static_cast<int32_t>(i);
  }
}

const Op& toy_op() {
  static const TypedOp<ToyParams> op({
      .name = "toy_pool_gather",
      .family = "test",
      .summary = "test op",
      .tensors = [](const ToyParams& p) {
        return std::vector{dtype_from(in("pool", {p.rows, p.dim}), "kv_dtype", p.kv_dtype),
                           pinned(in("bytes", {p.rows, 4}), DType::U8), pinned(in("ids", {p.n}), DType::I32),
                           out("out", {p.n, p.dim}), pinned(out("taken", {p.rows}), DType::I32),
                           pinned(out("slots", {p.rows, p.n}), DType::I32)};
      },
      .validate_params = [](const ToyParams& p) { positive(p.rows, "rows"); positive(p.n, "n"); },
      .validate_data = [](const ToyParams& p, const TensorMap& t) {
        ++toy_validations;
        for (int64_t id : to_indices(t.at("ids"))) check(id >= 0 && id < p.rows, "ids: {} is out of range", id);
      },
      .generate = [](const ToyParams& p, TensorMap& t, Rng& r) {
        Tensor& pool = t["pool"];
        if (is_float(pool.dtype()))
          uniform(pool, r, -4, 4);
        else
          uniform_int(pool, r, -100, 100);
        random_bytes(t["bytes"], r);
        uniform_int(t["ids"], r, 0, p.rows - 1);
      },
      .tolerance = [](const ToyParams&, DType dt, const TensorMap&) { return tol::elementwise(dt, 1); },
      .outputs = {{.output = "taken", .tolerance = [](const ToyParams&, DType, const TensorMap&) { return tol::exact(); }},
                  {.output = "slots",
                   .tolerance = [](const ToyParams&, DType, const TensorMap&) { return tol::exact(); },
                   .unwritten =
                       [](const ToyParams& p, const TensorMap&, const TensorMap& expected, std::vector<uint8_t>& mask) {
                         const int32_t* taken = expected.at("taken").as<int32_t>();
                         for (int64_t e = 0; e < p.rows; ++e)
                           for (int64_t j = taken[e]; j < p.n; ++j) mask[static_cast<size_t>(e * p.n + j)] = 0;
                       }}},
      .cost = [](const ToyParams&, DType) { return Cost{}; },
  });
  // Its ground truth, registered as the catalog's ops register theirs (reference/kernels.h).
  static const bool registered = (ref::register_kernel(OpRef<ToyParams>{"toy_pool_gather"}, toy_reference), true);
  (void)registered;
  return op;
}

const Params kToy = Params::of(ToyParams{.rows = 5, .dim = 3, .n = 9, .kind = QuantKind::Q6_K, .kv_dtype = KvDtype::F8_E4M3});

TEST(EnumParams, ParsedAndWrittenByName) {
  const ParamMap m = {{"rows", "2"}, {"dim", "3"}, {"n", "4"}, {"kind", "Q5_K"}, {"kv_dtype", "BF16"}};
  const Params p = toy_op().parse(m);
  EXPECT_EQ(p.as<ToyParams>().kind, QuantKind::Q5_K);
  EXPECT_EQ(p.as<ToyParams>().kv_dtype, KvDtype::BF16);
  EXPECT_EQ(toy_op().to_map(p), m);
  EXPECT_EQ(toy_op().variant(p), "kind=Q5_K kv_dtype=BF16");
  for (const auto& [k, name] : EnumNames<QuantKind>::kValues) EXPECT_EQ(enum_from_name<QuantKind>(name), k);
  for (const auto& [k, name] : EnumNames<KvDtype>::kValues) EXPECT_EQ(enum_from_name<KvDtype>(name), k);
}

TEST(EnumParams, UnknownNameListsTheValidOnes) {
  ParamMap m = {{"rows", "2"}, {"dim", "3"}, {"n", "4"}, {"kind", "Q4_X"}, {"kv_dtype", "I8"}};
  expect_error([&] { toy_op().parse(m); },
               "parameter 'kind': 'Q4_X' is not a weight kind (one of Q4_0|Q4_1|Q8_0|Q4_K|Q5_K|Q6_K|F32|F16|BF16)");
  m["kind"] = "Q4_K";
  m["kv_dtype"] = "fp8";
  expect_error([&] { toy_op().parse(m); }, "'fp8' is not a KV-cache dtype (one of F16|BF16|F8_E4M3|I8)");
}

TEST(EnumParams, NameCasesAndPresets) {
  EXPECT_EQ(named(QuantKind::Q4_K, "m1_n4096_k14336"), "Q4_K_m1_n4096_k14336");
  EXPECT_EQ(named(std::tuple{QuantKind::Q6_K, KvDtype::F8_E4M3}, "b8"), "Q6_K_F8_E4M3_b8");
}

TEST(EnumParams, ListedWithTheirValues) {
  const auto names = toy_op().param_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "kv_dtype=F16|BF16|F8_E4M3|I8"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "kind=Q4_0|Q4_1|Q8_0|Q4_K|Q5_K|Q6_K|F32|F16|BF16"), names.end());
}

TEST(TensorDtypes, EachTensorFollowsItsRule) {
  const Problem pr = make_problem(toy_op(), kToy, DType::BF16);
  EXPECT_EQ(pr.variant, "kind=Q6_K kv_dtype=F8_E4M3");
  EXPECT_EQ(pr.op_variant(), "toy_pool_gather kind=Q6_K kv_dtype=F8_E4M3");
  EXPECT_EQ(pr.dtype_of("pool"), DType::F8_E4M3);  // from kv_dtype
  EXPECT_EQ(pr.dtype_of("bytes"), DType::U8);       // pinned
  EXPECT_EQ(pr.dtype_of("ids"), DType::I32);
  EXPECT_EQ(pr.dtype_of("out"), DType::BF16);       // the activation dtype
  EXPECT_EQ(pr.dtype_of("taken"), DType::I32);
  // The case dtype comes from the activation tensors alone: here only an output, absent from a
  // user's file, so such a case is F32 unless it carries `out`.
  const TensorMap t = toy_op().make_case(pr, 1);
  EXPECT_EQ(case_dtype(toy_op(), kToy, t), DType::BF16);
  EXPECT_NO_THROW(toy_op().validate(pr, t));
}

// Every dtype a case can hold survives a case file: U8 bytes, I8, I32, U32 and F8_E4M3 included.
TEST(TensorDtypes, CaseFileRoundTripKeepsEveryByte) {
  for (KvDtype kv : {KvDtype::F16, KvDtype::BF16, KvDtype::F8_E4M3, KvDtype::I8}) {
    ToyParams tp = kToy.as<ToyParams>();
    tp.kv_dtype = kv;
    const Case c = generate_case(toy_op(), Params::of(tp), DType::F16, 3);
    const SafetensorsFile f = parse_safetensors(serialize_safetensors(case_to_file(toy_op(), c.params, c.tensors, c.expected, c.seed)));
    const Case back = case_from_file(f, toy_op());
    EXPECT_EQ(back.variant, c.variant);
    for (const char* name : {"pool", "bytes", "ids"}) {
      const Tensor &x = c.tensors.at(name), &y = back.tensors.at(name);
      ASSERT_EQ(x.dtype(), y.dtype()) << name;
      EXPECT_EQ(std::memcmp(x.data(), y.data(), x.nbytes()), 0) << name;
    }
    for (const char* name : {"out", "taken", "slots"})
      EXPECT_EQ(std::memcmp(c.expected.at(name).data(), back.expected.at(name).data(), c.expected.at(name).nbytes()), 0);
  }
  Tensor u(DType::U32, {3});
  u.as<uint32_t>()[2] = 0xfffffffeu;
  SafetensorsFile f;
  f.tensors["u"] = u;
  EXPECT_EQ(parse_safetensors(serialize_safetensors(f)).tensors.at("u").as<uint32_t>()[2], 0xfffffffeu);
}

TEST(TensorDtypes, WrongOrMissingPinnedTensorIsOneLineNamingBoth) {
  const Case c = generate_case(toy_op(), kToy, DType::F32, 3);
  const SafetensorsFile good = case_to_file(toy_op(), c.params, c.tensors, {}, 3);
  ASSERT_NO_THROW(case_from_file(good, toy_op()));

  SafetensorsFile f = good;
  f.tensors["bytes"] = Tensor(DType::F32, {5, 4});
  expect_error([&] { case_from_file(f, toy_op()); }, "tensor 'bytes' has dtype F32, expected U8 (pinned by the catalog)");
  f = good;
  f.tensors["ids"] = Tensor(DType::I64, {9});
  expect_error([&] { case_from_file(parse_safetensors(serialize_safetensors(f)), toy_op()); },
               "tensor 'ids' has dtype I64, expected I32");
  f = good;
  f.tensors["pool"] = Tensor(DType::I8, {5, 3});
  expect_error([&] { case_from_file(f, toy_op()); }, "tensor 'pool' has dtype I8, expected F8_E4M3 (kv_dtype=F8_E4M3)");
  f = good;
  f.tensors.erase("bytes");
  expect_error([&] { case_from_file(f, toy_op()); }, "missing tensor 'bytes' (U8 (pinned by the catalog))");
  f = good;
  f.metadata["kv_dtype"] = "Q8";
  expect_error([&] { case_from_file(f, toy_op()); }, "'Q8' is not a KV-cache dtype");
}

// A kernel that runs the reference and then does something to one output.
Verdict judge_toy(std::function<void(TensorMap&)> after, SupportFn supports = {}) {
  KernelTable k;
  k.add(OpRef<ToyParams>{"toy_pool_gather"},
        [after](const ToyParams& p, TensorMap& t) {
          toy_reference(p, t);
          after(t);
        },
        std::move(supports));
  HostBackend b("toy", std::move(k));
  return check_case(b, generate_case(toy_op(), kToy, DType::F32, 8), true);
}

TEST(PerOutputJudging, UnwrittenSlotsAreNotComparedButWrittenOnesAre) {
  const Case c = generate_case(toy_op(), kToy, DType::F32, 8);
  const auto mask = toy_op().compared(c.params, "slots", c.tensors, c.expected);
  ASSERT_EQ(mask.size(), 45u);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), 1), 9);  // one slot per id
  EXPECT_TRUE(toy_op().compared(c.params, "out", c.tensors, c.expected).empty());

  EXPECT_TRUE(judge_toy([](TensorMap&) {}).pass);
  // Garbage in the unwritten slots (the reference leaves them poisoned): not compared.
  const Verdict junk = judge_toy([](TensorMap& t) {
    Tensor& s = t.at("slots");
    const int32_t* taken = t.at("taken").as<int32_t>();
    for (int64_t e = 0; e < 5; ++e)
      for (int64_t j = taken[e]; j < 9; ++j) s.as<int32_t>()[e * 9 + j] = 12345;
  });
  EXPECT_TRUE(junk.pass) << junk.describe(true);
  EXPECT_NE(junk.describe().find("not_compared=36"), std::string::npos) << junk.describe();
  // A wrong id in a written slot: exact output, fails.
  const Verdict wrong = judge_toy([](TensorMap& t) {
    const int32_t* taken = t.at("taken").as<int32_t>();
    for (int64_t e = 0; e < 5; ++e)
      if (taken[e] > 0) {
        t.at("slots").as<int32_t>()[e * 9] += 1;
        return;
      }
  });
  EXPECT_FALSE(wrong.pass);
  // A write past the end of `slots` still trips its guard zone.
  const Verdict past = judge_toy([](TensorMap& t) { t.at("slots").as<int32_t>()[45] = 0; });
  EXPECT_FALSE(past.pass);
  EXPECT_NE(past.problem.find("guard zone"), std::string::npos) << past.problem;
}

TEST(PerOutputJudging, EachOutputHasItsOwnTolerance) {
  const Tolerance t_out = toy_op().tolerance(kToy, DType::F32, "out", {});
  const Tolerance t_taken = toy_op().tolerance(kToy, DType::F32, "taken", {});
  EXPECT_FALSE(t_out.exact());
  EXPECT_TRUE(t_taken.exact());
  // Within the float tolerance of `out`: passes; a bit off in an exact output: fails.
  EXPECT_TRUE(judge_toy([](TensorMap& t) {
                Tensor& o = t.at("out");
                o.set(0, o.get(0) * (1 + 0x1p-23));
              }).pass);
  const Verdict v = judge_toy([](TensorMap& t) { t.at("taken").as<int32_t>()[0] ^= 1 << 20; });
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.describe(true).find("tolerance: atol=0 rtol=0 (data movement: bit-exact)"), std::string::npos)
      << v.describe(true);
}

TEST(PerOutputJudging, NmseMetricBoundsTheWholeTensor) {
  Tensor want(DType::F32, {4}), got(DType::F32, {4});
  for (int i = 0; i < 4; ++i) want.set(i, 1.0 + i), got.set(i, 1.0 + i);
  got.set(3, 4.1);  // error 0.1 on |want|^2 = 30: nmse 3.3e-4
  Tolerance t{0, 0, "test", Metric::Nmse, 1e-3};
  EXPECT_TRUE(compare(want, got, t).pass());
  t.max_nmse = 1e-4;
  EXPECT_FALSE(compare(want, got, t).pass());
  got.set(0, std::nan(""));  // a NaN is never hidden by a small NMSE
  t.max_nmse = 1;
  EXPECT_FALSE(compare(want, got, t).pass());
}

TEST(SupportPerProblem, ABackendMayTakeOneKindAndNotAnother) {
  const SupportFn only_q4k = [](const Problem& pr) {
    return pr.params.as<ToyParams>().kind == QuantKind::Q4_K ? Support::yes() : Support::no("Q4_K only so far");
  };
  KernelTable k;
  k.add(OpRef<ToyParams>{"toy_pool_gather"}, toy_reference, only_q4k);
  HostBackend b("toy", std::move(k));
  ToyParams q4 = kToy.as<ToyParams>();
  q4.kind = QuantKind::Q4_K;
  EXPECT_TRUE(b.supports(make_problem(toy_op(), Params::of(q4), DType::F32)).ok);
  const Problem q6 = make_problem(toy_op(), kToy, DType::F32);
  EXPECT_EQ(b.supports(q6).reason, "Q4_K only so far");
  Case c = generate_case(q6, 1);
  TensorMap io = working_set(c);
  expect_error([&] { run_case(b, c, io); }, "toy does not support toy_pool_gather (F32, kind=Q6_K kv_dtype=F8_E4M3): Q4_K only so far");
}

// A refusal the backend finds only when it plans or launches the case (a scratch buffer above a device
// limit) is a refusal like a "no" from supports(): the verdict says unsupported with the reason, the
// matrix skips it, and it is never counted as a failure.
TEST(SupportPerProblem, ARefusalAtLaunchIsUnsupportedNotAFailure) {
  KernelTable k;
  k.add(OpRef<ToyParams>{"toy_pool_gather"}, [](const ToyParams&, TensorMap&) {
    supported_only_if(false, "toy: the scratch buffer of {} bytes is above the device's limit", int64_t{1} << 62);
  });
  HostBackend b("toy", std::move(k));
  const Case c = generate_case(make_problem(toy_op(), kToy, DType::F32), 1);
  ASSERT_TRUE(b.supports(c).ok);
  const Verdict v = check_case(b, c, true);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.unsupported, "toy: the scratch buffer of 4611686018427387904 bytes is above the device's limit");
  EXPECT_EQ(classify(v, nullptr), Outcome::Unsupported);
  EXPECT_FALSE(fails(classify(v, nullptr)));
  const KnownFailure known{"toy", "toy_pool_gather", "any", "F32", "listed"};
  EXPECT_EQ(classify(v, &known), Outcome::Unsupported);  // not an unexpected pass, not a known failure
  // Any other error at run time is still a failure.
  KernelTable broken;
  broken.add(OpRef<ToyParams>{"toy_pool_gather"}, [](const ToyParams&, TensorMap&) { fail("toy: lost the device"); });
  HostBackend bad("toy", std::move(broken));
  const Verdict f = check_case(bad, c, false);
  EXPECT_TRUE(f.unsupported.empty());
  EXPECT_EQ(classify(f, nullptr), Outcome::Fail);
}

// The matrix's path for one case: support asked once, the case validated once when it is made, and
// neither repeated by the two runs of the judge (the second checks determinism).
TEST(SupportPerProblem, ValidationAndSupportRunOncePerCase) {
  int asked = 0;
  KernelTable k;
  k.add(OpRef<ToyParams>{"toy_pool_gather"}, toy_reference, [&](const Problem&) {
    ++asked;
    return Support::yes();
  });
  HostBackend b("toy", std::move(k));
  const Problem pr = make_problem(toy_op(), kToy, DType::F32);
  toy_validations = 0;
  ASSERT_TRUE(b.supports(pr).ok);
  const Case c = generate_case(pr, 4);
  EXPECT_TRUE(check_case(b, c, true).pass);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(toy_validations, 1);
  // A case file: validated once when read.
  const SafetensorsFile f = case_to_file(toy_op(), c.params, c.tensors, c.expected, c.seed);
  toy_validations = 0;
  const Case back = case_from_file(f, toy_op());
  EXPECT_TRUE(check_case(b, back, true).pass);
  EXPECT_EQ(toy_validations, 1);
}

TEST(SupportPerProblem, DeviceDtypeGateNamesTheTensor) {
  const Problem pr = make_problem(toy_op(), kToy, DType::F16);
  const Support s = dtypes_handled(pr, {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U32}, "OpenCL");
  EXPECT_FALSE(s.ok);
  EXPECT_EQ(s.reason, "tensor 'pool' is F8_E4M3 (kv_dtype=F8_E4M3); the OpenCL kernels do not handle it");
}

TEST(KnownFailures, AnUnexpectedPassFailsInBothMatrices) {
  const KnownFailure k{"cpu", "gemm", "m1", "F32", "bug 1"};
  Verdict pass, fail;
  fail.pass = false;
  EXPECT_EQ(classify(pass, &k), Outcome::UnexpectedPass);
  EXPECT_TRUE(fails(classify(pass, &k)));
  EXPECT_EQ(classify(fail, &k), Outcome::Known);
  EXPECT_FALSE(fails(classify(fail, &k)));
  EXPECT_EQ(classify(pass, nullptr), Outcome::Pass);
  EXPECT_TRUE(fails(classify(fail, nullptr)));
}

// Rules of their own must name outputs: a misspelt one would silently judge nothing.
void expect_rules_name_outputs(const Op& op) {
  for (const CaseSpec& c : op.cases()) {
    const auto outs = make_problem(op, c.params, c.dtypes.front()).output_names();
    EXPECT_FALSE(outs.empty()) << op.name();
    for (const auto& r : op.ruled_outputs())
      EXPECT_NE(std::find(outs.begin(), outs.end(), r), outs.end()) << op.name() << ": rule for '" << r << "'";
  }
}

TEST(Catalog, OutputRulesNameDeclaredOutputs) {
  for (const Op* op : all_ops()) expect_rules_name_outputs(*op);
  EXPECT_EQ(toy_op().ruled_outputs(), (std::vector<std::string>{"taken", "slots"}));
  // The check itself: a rule for an output the op does not declare is caught.
  static const TypedOp<GemmParams> misspelt({
      .name = "misspelt_rule",
      .tensors = [](const GemmParams& p) { return std::vector{in("a", {p.m, p.k}), out("out", {p.m, p.n})}; },
      .tolerance = [](const GemmParams&, DType dt, const TensorMap&) { return tol::elementwise(dt); },
      .outputs = {{.output = "outt"}},
      .cases = {{"one", Tier::Smoke, {1, 1, 1}, {DType::F32}}},
  });
  EXPECT_NONFATAL_FAILURE(expect_rules_name_outputs(misspelt), "rule for 'outt'");
}

}  // namespace
}  // namespace ts
