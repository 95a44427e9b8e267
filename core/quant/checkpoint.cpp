#include "core/quant/checkpoint.h"

#include "core/ops/quant_params.h"

namespace ts::quant {

namespace {

const Tensor& matrix(const SafetensorsFile& f, const std::string& prefix, const char* part, DType dt) {
  const std::string name = prefix + "." + part;
  auto it = f.tensors.find(name);
  check(it != f.tensors.end(), "no tensor '{}' in the checkpoint (a GPTQ or AWQ layer has {}.qweight, .qzeros and .scales)", name,
        prefix);
  const Tensor& t = it->second;
  check(t.dtype() == dt, "tensor '{}' has dtype {}, expected {} (as AutoGPTQ and AutoAWQ write it)", name, dtype_name(t.dtype()),
        dtype_name(dt));
  check(t.shape().size() == 2 && t.shape()[0] > 0 && t.shape()[1] > 0, "tensor '{}' has shape {}, expected a non-empty matrix",
        name, shape_str(t.shape()));
  return t;
}

CheckpointLayer gptq(const SafetensorsFile& f, const std::string& prefix, const Tensor& qweight, const Tensor& qzeros,
                     const Tensor& scales, int64_t m) {
  const int64_t n = scales.shape()[1], groups = scales.shape()[0];
  const int64_t zero_words = qzeros.shape()[1];
  check(qzeros.shape()[0] == groups && (zero_words * 32) % n == 0 && (zero_words * 32 / n == 4 || zero_words * 32 / n == 8),
        "tensor '{}.qzeros' has shape {}: for {} groups of {} columns, expected [{}, {}] (4 bits) or [{}, {}] (8 bits)", prefix,
        shape_str(qzeros.shape()), groups, n, groups, n / 8, groups, n / 4);
  GptqParams p;
  p.bits = zero_words * 32 / n;
  p.m = m;
  p.n = n;
  p.k = qweight.shape()[0] * 32 / p.bits;
  check(p.k % groups == 0, "tensor '{}.scales' has {} groups, which do not divide k = {} (from qweight {})", prefix, groups, p.k,
        shape_str(qweight.shape()));
  p.group_size = p.k / groups;
  CheckpointLayer out{&op_or_throw("gemm_gptq"), {}, {{"qweight", qweight}, {"qzeros", qzeros}, {"scales", scales}}};
  if (auto it = f.tensors.find(prefix + ".g_idx"); it != f.tensors.end()) {
    const Tensor& g = it->second;
    check(g.dtype() == DType::I32 && g.shape() == Shape{p.k}, "tensor '{}.g_idx' is {} {}, expected I32 [{}]", prefix,
          dtype_name(g.dtype()), shape_str(g.shape()), p.k);
    for (int64_t i = 0; i < p.k && !p.desc_act; ++i) p.desc_act = g.as<int32_t>()[i] != i / p.group_size;
    if (p.desc_act) out.tensors.emplace("g_idx", g);
  }
  out.params = Params::of(p);
  return out;
}

CheckpointLayer awq(const std::string& prefix, const Tensor& qweight, const Tensor& qzeros, const Tensor& scales, int64_t m) {
  AwqParams p;
  p.m = m;
  p.k = qweight.shape()[0];
  p.n = scales.shape()[1];
  const int64_t groups = scales.shape()[0];
  check(qzeros.shape() == Shape{groups, p.n / 8}, "tensor '{}.qzeros' has shape {}, expected [{}, {}] (AWQ: 8 zeros per int32)",
        prefix, shape_str(qzeros.shape()), groups, p.n / 8);
  check(p.k % groups == 0, "tensor '{}.scales' has {} groups, which do not divide k = {} (qweight's rows)", prefix, groups, p.k);
  p.group_size = p.k / groups;
  return {&op_or_throw("gemm_awq"), Params::of(p), {{"qweight", qweight}, {"qzeros", qzeros}, {"scales", scales}}};
}

}  // namespace

bool in_layer(const std::string& name, const std::string& prefix) {
  for (const char* part : {".qweight", ".qzeros", ".scales", ".g_idx"})
    if (name == prefix + part) return true;
  return false;
}

CheckpointLayer checkpoint_layer(const SafetensorsFile& f, const std::string& prefix, int64_t m) {
  const Tensor& qweight = matrix(f, prefix, "qweight", DType::I32);
  const Tensor& qzeros = matrix(f, prefix, "qzeros", DType::I32);
  const Tensor& scales = matrix(f, prefix, "scales", DType::F16);
  const int64_t n = scales.shape()[1];
  // GPTQ packs along k (qweight has n columns), AWQ along n (n / 8 columns).
  if (qweight.shape()[1] == n) return gptq(f, prefix, qweight, qzeros, scales, m);
  if (qweight.shape()[1] * 8 == n) return awq(prefix, qweight, qzeros, scales, m);
  fail("tensor '{}.qweight' has shape {}: with scales {}, expected [k*bits/32, {}] (GPTQ) or [k, {}] (AWQ)", prefix,
       shape_str(qweight.shape()), shape_str(scales.shape()), n, n / 8);
}

}  // namespace ts::quant
