#include "graph/graph.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "core/host_backend.h"
#include "core/unsupported.h"
#include "graph/recording.h"

namespace ts::graph {

DecodeGraph::DecodeGraph(Backend& b, Program program, std::shared_ptr<KvCache> cache)
    : b_(b), program_(std::move(program)), cache_(cache) {
  check(cache != nullptr, "{}: no KV cache", program_.name);
  const DecodeParams& p = program_.params;
  check(static_cast<int64_t>(cache->k.size()) == p.layers, "{}: the KV cache has {} layers, the program {}",
        program_.name, cache->k.size(), p.layers);
  // Every node's op on this backend, asked once: a "no" is the program's.
  for (const auto& n : program_.nodes) {
    const Support s = b.supports(n->problem);
    if (!s.ok)
      throw Unsupported(fmt::format("{} does not run {} ({} of {}): {}", b.name(), n->problem.op_variant(), n->label,
                                    program_.name, s.reason));
  }
}

static bool is_host(Backend& b) { return dynamic_cast<HostBackend*>(&b) != nullptr; }

Support DecodeGraph::replay_support(Backend& b) {
  if (b.name() == "reference") return Support::no("the reference runs eagerly only: it is the ground truth replays are judged against");
  // A host backend's launches read the tensors given to prepare() when they run, so the captured list
  // replays on whatever the binds put there.
  if (is_host(b)) return Support::yes();
  // A device backend's launches each hold their own buffers: the step replays as one recorded form.
  return b.step_recording_support();
}

KvCache& DecodeGraph::live_cache(const char* what) {
  const std::shared_ptr<KvCache> c = cache_.lock();
  check(c != nullptr, "{}: {} after its KV cache was freed (reset_graph, then capture on a live cache)", program_.name, what);
  return *c;  // the caller's shared_ptr keeps it alive for the step
}

void DecodeGraph::set_decode_state(std::span<const uint32_t> w) {
  const DecodeParams& p = program_.params;
  check(static_cast<int64_t>(w.size()) >= p.state_words(),
        "{}: state buffer too small: {} words, a step reads {} (token, position, context length, {} block-table entries)",
        program_.name, w.size(), p.state_words(), p.max_blocks());
  using namespace state_layout;
  check(w[kToken] < p.vocab, "{}: state token {} is not below vocab {}", program_.name, w[kToken], p.vocab);
  check(w[kPosition] < p.max_pos(), "{}: state position {} is not below the RoPE tables' {} rows", program_.name,
        w[kPosition], p.max_pos());
  check(w[kContextLen] == static_cast<uint64_t>(w[kPosition]) + 1,
        "{}: state context length {} is not position {} + 1 (a decode step attends over the cache up to its own token)",
        program_.name, w[kContextLen], w[kPosition]);
  const int64_t used = (static_cast<int64_t>(w[kContextLen]) + p.block_size - 1) / p.block_size;
  check(used <= p.max_blocks(), "{}: context length {} needs {} blocks, the table has {}", program_.name,
        w[kContextLen], used, p.max_blocks());
  const std::shared_ptr<KvCache> c = cache_.lock();
  check(c != nullptr, "{}: set_decode_state after the KV cache was freed", program_.name);
  for (int64_t i = 0; i < used; ++i)
    check(w[kTable + i] < c->num_blocks(), "{}: state block table entry {} is {}, the cache has {} blocks",
          program_.name, i, w[kTable + i], c->num_blocks());
  std::memcpy(program_.state->data(), w.data(), static_cast<size_t>(p.state_words()) * sizeof(uint32_t));
  if (recorded_) recorded_->write_state(w.first(static_cast<size_t>(p.state_words())));
}

std::vector<Tensor*> DecodeGraph::pools_of(KvCache& cache) const {
  std::vector<Tensor*> pools;  // layer l's K pool at 2 l, its V pool at 2 l + 1
  for (size_t l = 0; l < cache.k.size(); ++l) pools.push_back(&cache.k[l]), pools.push_back(&cache.v[l]);
  return pools;
}

void DecodeGraph::sync_cache() {
  if (!recorded_ || !device_pools_newer_) return;
  const std::shared_ptr<KvCache> c = cache_.lock();
  if (!c || c->generation() != captured_generation_) return;  // the pools the device holds are no longer the cache's
  recorded_->download_pools(pools_of(*c));
  device_pools_newer_ = false;
}

// The binds as device copies and shares (graph/recording.h), each Pool as the pool the launch's
// tensor becomes. The launches ran the capture step, so the pools uploaded now hold what it wrote.
void DecodeGraph::record_on_device(KvCache& cache) {
  std::vector<Launch*> launches;
  for (const auto& l : launches_) launches.push_back(l.get());
  StepRecording r = step_recording(program_, launches, pools_of(cache));
  output_node_ = static_cast<size_t>(r.output_node), output_name_ = r.output;
  r.bake_state_word = bake_state_word_;
  recorded_ = b_.record_step(r);
  device_pools_newer_ = host_pools_newer_ = false;
}

void DecodeGraph::apply_binds(Node& n, KvCache& cache) {
  for (const Bind& b : n.binds) {
    if (b.kind == Bind::Kind::Pool) {
      // The pool lives in the cache between launches; the node holds it only while it runs.
      std::swap(*b.dst, (b.value ? cache.v : cache.k)[static_cast<size_t>(b.layer)]);
      continue;
    }
    const size_t es = dtype_size(b.src->dtype());
    std::memcpy(b.dst->data() + b.dst_offset * es, b.src->data() + b.src_offset * es, static_cast<size_t>(b.count) * es);
  }
}

void DecodeGraph::return_pools(Node& n, KvCache& cache) {
  for (const Bind& b : n.binds)
    if (b.kind == Bind::Kind::Pool) std::swap(*b.dst, (b.value ? cache.v : cache.k)[static_cast<size_t>(b.layer)]);
}

void DecodeGraph::step_eager(const NodeObserver& observe) {
  std::shared_ptr<KvCache> hold = cache_.lock();
  check(hold != nullptr, "{}: a step after its KV cache was freed", program_.name);
  check(hold->num_blocks() == program_.params.num_blocks(), "{}: the KV cache has {} blocks, the program's pools {}",
        program_.name, hold->num_blocks(), program_.params.num_blocks());
  KvCache& cache = *hold;
  if (recorded_ && device_pools_newer_) sync_cache();  // the step writes into the pools the replays left
  const bool record = capturing_;
  launch_seconds_ = 0;
  if (record) {
    check(!stepped_in_window_, "{}: one step per capture window (end_graph_capture first)", program_.name);
    launches_.clear();
  }
  for (auto& np : program_.nodes) {
    Node& n = *np;
    apply_binds(n, cache);
    try {
      const Op& op = *n.problem.op;
      op.validate(n.problem, n.io);
      ++counters_.validations;
      TensorMap before;
      if (observe) before = n.io;
      auto launch = b_.prepare(n.problem, n.io);
      ++counters_.prepares;
      launch->execute();
      launch_seconds_ += launch->last_seconds();
      launch->finish();
      for (const auto& name : n.problem.output_names())
        check(n.io.at(name).guards_intact(), "{} {} ({}): write outside tensor '{}' (guard zone overwritten)", b_.name(),
              op.name(), n.label, name);
      if (observe) observe(n, before);
      if (record) launches_.push_back(std::move(launch));
    } catch (...) {
      return_pools(n, cache);
      if (record) launches_.clear();
      throw;
    }
    return_pools(n, cache);
  }
  if (record) {
    stepped_in_window_ = true;
    captured_generation_ = cache.generation();
    captured_blocks_ = cache.num_blocks();
  } else if (recorded_) {
    host_pools_newer_ = true;  // the device's pools miss this step's K/V row
  }
}

void DecodeGraph::begin_graph_capture() {
  check(!capturing_, "{}: begin_graph_capture inside a capture window", program_.name);
  const Support s = replay_support(b_);
  if (!s.ok) throw Unsupported(fmt::format("{}: graph capture: {}", b_.name(), s.reason));
  reset_graph();
  capturing_ = true;
}

void DecodeGraph::end_graph_capture() {
  check(capturing_, "{}: end_graph_capture without begin_graph_capture", program_.name);
  capturing_ = false;
  check(stepped_in_window_, "{}: end_graph_capture with no step run in the capture window", program_.name);
  if (!is_host(b_)) {
    const std::shared_ptr<KvCache> hold = cache_.lock();
    check(hold != nullptr, "{}: end_graph_capture after its KV cache was freed", program_.name);
    record_on_device(*hold);
  }
  captured_ = true;
}

void DecodeGraph::replay_last_graph() {
  check(captured_, "{}: replay before capture: no step is recorded (begin_graph_capture, a step, end_graph_capture)",
        program_.name);
  std::shared_ptr<KvCache> hold = cache_.lock();
  check(hold != nullptr, "{}: replay after its KV cache was freed (reset_graph, then capture again)", program_.name);
  check(hold->generation() == captured_generation_ && hold->num_blocks() == captured_blocks_,
        "{}: replay after its KV cache was resized ({} blocks at capture, {} now; reset_graph, then capture again)",
        program_.name, captured_blocks_, hold->num_blocks());
  KvCache& cache = *hold;
  if (recorded_) {
    if (host_pools_newer_) recorded_->upload_pools(pools_of(cache));
    host_pools_newer_ = false;
    recorded_->replay(program_.nodes[output_node_]->io.at(output_name_));
    device_pools_newer_ = true;
    launch_seconds_ = recorded_->last_seconds();
    return;
  }
  launch_seconds_ = 0;
  for (size_t i = 0; i < program_.nodes.size(); ++i) {
    Node& n = *program_.nodes[i];
    apply_binds(n, cache);
    launches_[i]->execute();
    launch_seconds_ += launches_[i]->last_seconds();
    launches_[i]->finish();
    return_pools(n, cache);
  }
}

void DecodeGraph::reset_graph() {
  sync_cache();  // the newest pools are the device's: the cache keeps them
  recorded_.reset();
  device_pools_newer_ = host_pools_newer_ = false;
  launches_.clear();
  captured_ = false;
  capturing_ = false;
  stepped_in_window_ = false;
}

void DecodeGraph::check_guards() {
  if (recorded_) {
    sync_cache();
    recorded_->download_nodes();
  }
  for (const auto& n : program_.nodes)
    for (const auto& [name, t] : n->io)
      check(t.guards_intact(), "{} ({}): tensor '{}' has a guard zone overwritten", program_.name, n->label, name);
  const std::shared_ptr<KvCache> c = cache_.lock();
  if (!c) return;
  for (size_t l = 0; l < c->k.size(); ++l)
    check(c->k[l].guards_intact() && c->v[l].guards_intact(), "{}: layer {}'s KV pools have a guard zone overwritten",
          program_.name, l);
}

}  // namespace ts::graph
