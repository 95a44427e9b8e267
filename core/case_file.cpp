#include "core/case_file.h"

#include <charconv>

namespace ts {

Case case_from_file(const SafetensorsFile& f) {
  auto it = f.metadata.find("op");
  check(it != f.metadata.end(), "case file has no \"op\" in its metadata");
  Case c;
  c.op = &op_or_throw(it->second);
  c.metadata = f.metadata;
  if (auto s = f.metadata.find("seed"); s != f.metadata.end()) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s->second.data(), s->second.data() + s->second.size(), v);
    check(ec == std::errc() && p == s->second.data() + s->second.size(), "seed '{}' is not an integer", s->second);
    c.seed = v;
  }
  TensorMap inputs;
  for (const auto& [name, t] : f.tensors) {
    if (name.rfind("expected.", 0) == 0)
      c.expected.emplace(name.substr(9), t);
    else
      inputs.emplace(name, t);
  }
  c.params = c.op->parse(f.metadata, &inputs);
  c.dtype = case_dtype(*c.op, c.params, inputs);
  c.op->validate(c.params, inputs);
  const auto decls = c.op->tensors(c.params, c.dtype);
  for (const auto& [name, t] : c.expected) {
    const TensorDecl* d = nullptr;
    for (const auto& x : decls)
      if (x.name == name) d = &x;
    check(d && d->role != Role::In, "expected.{} is not an output of {}", name, c.op->name());
    check(t.dtype() == *d->pinned && t.shape() == d->shape, "expected.{}: {} {}, the op produces {} {}", name,
          dtype_name(t.dtype()), shape_str(t.shape()), dtype_name(*d->pinned), shape_str(d->shape));
  }
  TensorMap all = allocate_from_decls(decls);
  for (auto& [name, t] : inputs) all[name] = std::move(t);
  c.tensors = std::move(all);
  return c;
}

Case load_case(const std::string& path) {
  try {
    return case_from_file(read_safetensors(path));
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;
    fail("{}: {}", path, msg);
  }
}

SafetensorsFile case_to_file(const Op& op, const Params& p, const TensorMap& inputs, const TensorMap& expected,
                             std::optional<uint64_t> seed) {
  SafetensorsFile f;
  f.metadata = op.to_map(p);
  f.metadata["op"] = op.name();
  if (seed) f.metadata["seed"] = std::to_string(*seed);
  const DType dt = case_dtype(op, p, inputs);
  for (const auto& d : op.tensors(p, dt)) {
    if (d.role != Role::Out) f.tensors.emplace(d.name, inputs.at(d.name));
    if (auto e = expected.find(d.name); e != expected.end() && d.role != Role::In)
      f.tensors.emplace("expected." + d.name, e->second);
  }
  return f;
}

uint64_t case_seed(const Op& op, const std::string& case_name, DType dt) {
  return stable_hash(op.name() + "/" + case_name + "/" + std::string(dtype_name(dt)));
}

Case generate_case(const Op& op, const Params& p, DType dt, uint64_t seed) {
  Case c;
  c.op = &op;
  c.params = p;
  c.dtype = dt;
  c.seed = seed;
  c.metadata = op.to_map(p);
  c.tensors = op.make_case(p, dt, seed);
  op.validate(p, c.tensors);
  TensorMap out = c.tensors;
  op.reference(p, out);
  for (const auto& name : op.output_names(p)) c.expected.emplace(name, std::move(out.at(name)));
  return c;
}

TensorMap working_set(const Case& c) {
  TensorMap t = c.tensors;
  for (const auto& d : c.op->tensors(c.params, c.dtype))
    if (d.role == Role::Out) poison(t.at(d.name));
  return t;
}

}  // namespace ts
