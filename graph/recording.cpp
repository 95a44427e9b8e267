#include "graph/recording.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "core/error.h"

namespace ts::graph {

namespace {

using Where = std::pair<int64_t, std::string>;  // a node's index and its name of the tensor

Role role_of(const Node& n, const std::string& name) {
  for (const TensorDecl& d : n.problem.decls)
    if (d.name == name) return d.role;
  fail("{}: tensor '{}' is not declared by {}", n.label, name, n.problem.op_variant());
}

// A copy that carries the whole of `b.src` into the whole of `b.dst`, the only bind into it.
bool whole(const Node& n, const Bind& b) {
  const int64_t into = std::count_if(n.binds.begin(), n.binds.end(), [&](const Bind& o) { return o.dst == b.dst; });
  return into == 1 && b.src_offset == 0 && b.dst_offset == 0 && b.src->dtype() == b.dst->dtype() &&
         b.count == b.src->numel() && b.count == b.dst->numel();
}

}  // namespace

StepRecording step_recording(const Program& program, std::span<Launch* const> launches, std::vector<Tensor*> pools) {
  check(launches.size() == program.nodes.size(), "{}: {} launches recorded for {} nodes", program.name,
        launches.size(), program.nodes.size());
  std::map<const Tensor*, Where> where;
  for (size_t i = 0; i < program.nodes.size(); ++i)
    for (const auto& [name, t] : program.nodes[i]->io) where[&t] = {static_cast<int64_t>(i), name};
  where[program.state.get()] = {StepRecording::kState, "state"};
  std::map<Where, Where> shared;  // a shared input -> the writer's tensor it reads
  auto writer = [&](const Tensor* t) {
    const Where& w = where.at(t);
    const auto it = shared.find(w);
    return it == shared.end() ? w : it->second;
  };

  StepRecording r;
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    const Node& n = *program.nodes[i];
    StepRecording::Node rn;
    rn.launch = launches[i];
    for (const Bind& b : n.binds) {
      const std::string& dst = where.at(b.dst).second;
      if (b.kind == Bind::Kind::Pool) {
        rn.pools.push_back({dst, 2 * b.layer + (b.value ? 1 : 0)});
        continue;
      }
      const auto [src_node, src] = writer(b.src);
      const int64_t es = static_cast<int64_t>(dtype_size(b.src->dtype()));
      if (src_node != StepRecording::kState && role_of(n, dst) == Role::In && whole(n, b)) {
        rn.shares.push_back({dst, src_node, src, b.count * es});
        shared[{static_cast<int64_t>(i), dst}] = {src_node, src};
        continue;
      }
      rn.copies.push_back({src_node, src, dst, b.src_offset * es, b.dst_offset * es, b.count * es});
    }
    for (const auto& entry : n.io) {  // not a structured binding: clang 14 lambdas cannot capture one
      const std::string& name = entry.first;
      const auto named = [&](const auto& u) { return u.tensor == name; };
      if (std::none_of(rn.pools.begin(), rn.pools.end(), named) && std::none_of(rn.shares.begin(), rn.shares.end(), named))
        rn.tensors.push_back(name);
    }
    r.nodes.push_back(std::move(rn));
  }
  const uint32_t* w = program.state->as<uint32_t>();
  r.state.assign(w, w + program.params.state_words());
  r.pools = std::move(pools);
  std::tie(r.output_node, r.output) = writer(program.output);
  r.output_bytes = program.output->storage_bytes();
  return r;
}

}  // namespace ts::graph
