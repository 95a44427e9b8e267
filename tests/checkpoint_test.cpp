// GPTQ and AWQ layers of a checkpoint recognised by their shapes (core/quant/checkpoint.h): a
// checkpoint file written here from generated cases, read back as a layer whose op, bits, group size
// and act-order are the case's, tensors unchanged; and malformed layers as one-line errors.
#include <algorithm>
#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/case_file.h"
#include "core/ops/quant_params.h"
#include "core/quant/checkpoint.h"
#include "tests/expect_error.h"
#include "tests/run_cli.h"
#include "tests/temp_path.h"

namespace ts {
namespace {

const std::string kPrefix = "model.layers.0.self_attn.q_proj";

// A checkpoint holding one layer: the quantized tensors of a generated case under the layer's names,
// and a bias and another layer's tensor beside them, as a real shard has.
SafetensorsFile checkpoint_of(const Case& c, bool trivial_g_idx = false) {
  SafetensorsFile f;
  for (const char* part : {"qweight", "qzeros", "scales", "g_idx"})
    if (auto it = c.tensors.find(part); it != c.tensors.end()) f.tensors.emplace(kPrefix + "." + part, it->second);
  if (trivial_g_idx) {
    const auto& p = c.params.as<GptqParams>();
    Tensor g(DType::I32, {p.k});
    for (int64_t i = 0; i < p.k; ++i) g.as<int32_t>()[i] = static_cast<int32_t>(i / p.group_size);
    f.tensors.emplace(kPrefix + ".g_idx", g);
  }
  f.tensors.emplace(kPrefix + ".bias", Tensor(DType::F16, {8}));
  f.tensors.emplace("model.layers.0.self_attn.k_proj.qweight", Tensor(DType::I32, {4, 8}));
  return f;
}

void expect_same(const TensorMap& got, const Case& c) {
  for (const auto& [name, t] : got) {
    const Tensor& want = c.tensors.at(name);
    ASSERT_EQ(t.shape(), want.shape()) << name;
    ASSERT_EQ(std::memcmp(t.data(), want.data(), t.nbytes()), 0) << name;
  }
}

TEST(Checkpoint, GptqLayersAreRecognisedByShape) {
  for (int64_t bits : {4, 8})
    for (int64_t gs : {32, 64, 128})
      for (bool act : {false, true}) {
        const GptqParams p{bits, gs, 1, 256, 48, act};
        const Case c = generate_case(op_or_throw("gemm_gptq"), Params::of(p), DType::F32, 4);
        const quant::CheckpointLayer l = quant::checkpoint_layer(checkpoint_of(c), kPrefix, 3);
        ASSERT_EQ(l.op->name(), "gemm_gptq");
        const auto& q = l.params.as<GptqParams>();
        EXPECT_EQ(q.bits, bits);
        EXPECT_EQ(q.group_size, gs);
        EXPECT_EQ(q.k, 256);
        EXPECT_EQ(q.n, 48);
        EXPECT_EQ(q.m, 3);
        EXPECT_EQ(q.desc_act, act) << "bits " << bits << " group " << gs;
        expect_same(l.tensors, c);
      }
  // AutoGPTQ ships g_idx without act-order too: g = k / group_size is no act-order.
  const Case c = generate_case(op_or_throw("gemm_gptq"), Params::of(GptqParams{4, 64, 1, 256, 48, false}), DType::F32, 4);
  const quant::CheckpointLayer l = quant::checkpoint_layer(checkpoint_of(c, true), kPrefix, 1);
  EXPECT_FALSE(l.params.as<GptqParams>().desc_act);
  EXPECT_EQ(l.tensors.count("g_idx"), 0u);
}

TEST(Checkpoint, AwqLayersAreRecognisedByShape) {
  for (int64_t gs : {32, 64, 128}) {
    const Case c = generate_case(op_or_throw("gemm_awq"), Params::of(AwqParams{4, gs, 1, 256, 48}), DType::F32, 4);
    const quant::CheckpointLayer l = quant::checkpoint_layer(checkpoint_of(c), kPrefix, 2);
    ASSERT_EQ(l.op->name(), "gemm_awq");
    const auto& q = l.params.as<AwqParams>();
    EXPECT_EQ(q.group_size, gs);
    EXPECT_EQ(q.k, 256);
    EXPECT_EQ(q.n, 48);
    EXPECT_EQ(q.m, 2);
    expect_same(l.tensors, c);
  }
}

TEST(Checkpoint, MalformedLayersAreOneLineErrors) {
  const Case c = generate_case(op_or_throw("gemm_gptq"), Params::of(GptqParams{4, 64, 1, 256, 48, true}), DType::F32, 4);
  const SafetensorsFile good = checkpoint_of(c);
  expect_error([&] { quant::checkpoint_layer(good, "model.layers.9.mlp", 1); },
               "no tensor 'model.layers.9.mlp.qweight' in the checkpoint");
  SafetensorsFile f = good;
  f.tensors.at(kPrefix + ".scales") = Tensor(DType::BF16, {4, 48});
  expect_error([&] { quant::checkpoint_layer(f, kPrefix, 1); }, "tensor '" + kPrefix + ".scales' has dtype BF16, expected F16");
  f = good;
  f.tensors.at(kPrefix + ".qzeros") = Tensor(DType::I32, {4, 5});
  expect_error([&] { quant::checkpoint_layer(f, kPrefix, 1); }, "tensor '" + kPrefix + ".qzeros' has shape [4,5]");
  f = good;
  f.tensors.at(kPrefix + ".qweight") = Tensor(DType::I32, {32, 40});
  expect_error([&] { quant::checkpoint_layer(f, kPrefix, 1); }, "expected [k*bits/32, 48] (GPTQ) or [k, 6] (AWQ)");
  f = good;
  f.tensors.at(kPrefix + ".scales") = Tensor(DType::F16, {3, 48});
  f.tensors.at(kPrefix + ".qzeros") = Tensor(DType::I32, {3, 6});
  expect_error([&] { quant::checkpoint_layer(f, kPrefix, 1); }, "has 3 groups, which do not divide k = 256");
  f = good;
  f.tensors.at(kPrefix + ".g_idx") = Tensor(DType::I32, {255});
  expect_error([&] { quant::checkpoint_layer(f, kPrefix, 1); }, "g_idx' is I32 [255], expected I32 [256]");
}

TEST(Checkpoint, OnlyTheLayerIsReadFromTheFile) {
  const Case c = generate_case(op_or_throw("gemm_awq"), Params::of(AwqParams{4, 32, 1, 128, 16}), DType::F32, 4);
  const std::string path = ts::test::temp_path("checkpoint_test.safetensors").string();
  write_safetensors(path, checkpoint_of(c));
  const SafetensorsFile f = read_safetensors(path, [](const std::string& n) { return quant::in_layer(n, kPrefix); });
  EXPECT_EQ(f.tensors.size(), 3u);  // qweight, qzeros, scales: not the bias, not k_proj
  expect_same(quant::checkpoint_layer(f, kPrefix, 1).tensors, c);
  // A truncated file is refused whole, as by the full reader.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  expect_error([&] { read_safetensors(path, [](const std::string&) { return true; }); }, "the file ends inside the data section");
  std::filesystem::remove(path);
}

// The CLI end to end: a checkpoint file in, a case file out whose tensors are the layer's and whose
// expected outputs every backend can be checked against; bad input is one line on stderr, exit 1.
TEST(CheckpointCli, CaseOfALayerChecksOnTheReference) {
  namespace fs = std::filesystem;
  const fs::path dir = ts::test::temp_path("checkpoint_cli");
  fs::create_directories(dir);
  const std::string ckpt = (dir / "model.safetensors").string(), out = (dir / "layer.safetensors").string();
  const Case c = generate_case(op_or_throw("gemm_gptq"), Params::of(GptqParams{8, 32, 1, 128, 16, true}), DType::F32, 4);
  write_safetensors(ckpt, checkpoint_of(c));
  const auto r = test::run_cli("checkpoint case " + ckpt + " " + kPrefix + " --m 3 --dtype BF16 --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("gemm_gptq"), std::string::npos) << r.out;
  const Case written = load_case(out);
  EXPECT_EQ(written.op->name(), "gemm_gptq");
  EXPECT_EQ(written.dtype, DType::BF16);
  EXPECT_TRUE(written.params.as<GptqParams>().desc_act);
  EXPECT_EQ(written.params.as<GptqParams>().m, 3);
  expect_same({{"qweight", written.tensors.at("qweight")}, {"g_idx", written.tensors.at("g_idx")}}, c);
  EXPECT_EQ(written.expected.count("out"), 1u);
  const auto check = test::run_cli("check " + out + " --backend reference");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  const auto missing = test::run_cli("checkpoint case " + ckpt + " model.layers.3.mlp --out " + out);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no tensor 'model.layers.3.mlp.qweight'"), std::string::npos) << missing.err;
  const auto bad_m = test::run_cli("checkpoint case " + ckpt + " " + kPrefix + " --m x --out " + out);
  EXPECT_EQ(bad_m.exit_code, 1);
  EXPECT_NE(bad_m.err.find("'x' is not an integer"), std::string::npos) << bad_m.err;
  const auto same = test::run_cli("checkpoint case " + ckpt + " " + kPrefix + " --out " + ckpt);
  EXPECT_EQ(same.exit_code, 1) << "overwrote its input";
  fs::remove_all(dir);
}

// A small layer with a huge --m asks for more work than any case should (2 x 2^23 x 16 x 128 = 3.4e10
// FLOPs of the reference's double loops): refused at once, with the figures, and no file left. The
// memory budget is raised so that the work budget, not the memory one, is what refuses it.
TEST(CheckpointCli, HugeMIsRefusedByTheWorkBudget) {
  namespace fs = std::filesystem;
  const fs::path dir = ts::test::temp_path("checkpoint_cli_work");
  fs::create_directories(dir);
  const std::string ckpt = (dir / "model.safetensors").string(), out = (dir / "layer.safetensors").string();
  const Case c = generate_case(op_or_throw("gemm_gptq"), Params::of(GptqParams{8, 32, 1, 128, 16, true}), DType::F32, 4);
  write_safetensors(ckpt, checkpoint_of(c));
  const auto start = std::chrono::steady_clock::now();
  const std::string big = "TOUCHSTONE_MEMORY_BUDGET=64G";
  const auto r = test::run_cli("checkpoint case " + ckpt + " " + kPrefix + " --m 8388608 --out " + out, big);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("operations (3.44e+10 FLOPs + "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the work budget of 1.72e+10 operations"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  // The budget is the user's to raise (here only far enough to show it is read).
  const auto raised = test::run_cli("checkpoint case " + ckpt + " " + kPrefix + " --m 8388608 --out " + out,
                                    big + " TOUCHSTONE_WORK_BUDGET=20G");
  EXPECT_EQ(raised.exit_code, 1);
  EXPECT_NE(raised.err.find("more than the work budget of 2e+10 operations"), std::string::npos) << raised.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ts
