// touchstone graph case MODEL.gguf --program llama_decode --layers A-B --steps N --out CASE: a graph
// case (docs/catalog.md, "Family graph") of a llama checkpoint's own tensors. Layers A..B of the
// checkpoint become the program's blk.0..; matrices go in with their bytes unchanged; the case's
// state, prompt cache and expected outputs are made as a generated case's are.
#include <charconv>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/weight_case.h"
#include "core/gguf.h"
#include "core/quant/formats.h"
#include "graph/case.h"
#include "graph/weights.h"

namespace ts::cli {

namespace {

int64_t int_flag(const std::string& s, const char* what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  check(ec == std::errc() && end == s.data() + s.size(), "{} '{}' is not an integer", what, s);
  return v;
}

// A metadata number of the checkpoint's, or `fallback` when it has none (an Error without one).
double number(const gguf::Header& h, const std::string& key, std::optional<double> fallback = std::nullopt) {
  const gguf::Value* v = h.find(key);
  if (!v) {
    check(fallback.has_value(), "the checkpoint has no '{}'", key);
    return *fallback;
  }
  if (const auto* u = std::get_if<uint64_t>(&v->v)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&v->v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v->v)) return *d;
  fail("the checkpoint's '{}' is {}, not a number", key, gguf::value_type_name(v->type));
}

// "A-B" (or "A"): the checkpoint's layers the case takes.
std::pair<int64_t, int64_t> layer_range(const std::string& s, int64_t block_count) {
  const size_t dash = s.find('-');
  const int64_t a = int_flag(s.substr(0, dash), "--layers");
  const int64_t b = dash == std::string::npos ? a : int_flag(s.substr(dash + 1), "--layers");
  check(a >= 0 && a <= b, "--layers '{}' is not a range A-B with 0 <= A <= B", s);
  check(b < block_count, "--layers {}: past the checkpoint's {} layers (blk.0 .. blk.{})", s, block_count, block_count - 1);
  return {a, b};
}

int write_case(const Args& a) {
  check(a.positional().size() == 2, "usage: touchstone graph case MODEL.gguf --program P --layers A-B --steps N --out CASE");
  const std::string model = a.positional()[1];
  const std::string out = a.require("out");
  check_output_path(out, model);
  const std::string program = a.get("program").value_or(graph::kLlamaDecode);
  graph::check_program(program);
  check(program == graph::kLlamaDecode, "--program {}: graph case reads a llama checkpoint, into llama_decode", program);
  const int64_t steps = int_flag(a.require("steps"), "--steps");
  check(steps > 0, "--steps must be positive, is {}", steps);

  const gguf::File f(model);
  const gguf::Header& h = f.header();
  const gguf::Value* arch = h.find("general.architecture");
  const std::string archs = arch ? arch->str() : "(none)";
  check(archs == "llama", "{}: general.architecture is {}; {} reads a llama checkpoint", f.path(), archs, program);
  const int64_t block_count = static_cast<int64_t>(number(h, "llama.block_count"));
  const auto [first, last] = layer_range(a.require("layers"), block_count);

  graph::DecodeParams p;
  p.hidden = static_cast<int64_t>(number(h, "llama.embedding_length"));
  p.ffn = static_cast<int64_t>(number(h, "llama.feed_forward_length"));
  p.heads = static_cast<int64_t>(number(h, "llama.attention.head_count"));
  p.kv_heads = static_cast<int64_t>(number(h, "llama.attention.head_count_kv", static_cast<double>(p.heads)));
  check(p.heads > 0 && p.hidden % p.heads == 0, "the checkpoint's embedding_length {} is not a multiple of head_count {}",
        p.hidden, p.heads);
  p.head_dim = static_cast<int64_t>(number(h, "llama.attention.key_length", static_cast<double>(p.hidden / p.heads)));
  p.eps = static_cast<float>(number(h, "llama.attention.layer_norm_rms_epsilon", 1e-5));
  p.rope_base = static_cast<float>(number(h, "llama.rope.freq_base", 10000.0));
  p.layers = last - first + 1;
  p.steps = steps;
  p.ctx = a.get("ctx") ? int_flag(*a.get("ctx"), "--ctx") : 0;
  p.block_size = a.get("block-size") ? int_flag(*a.get("block-size"), "--block-size") : 16;
  const gguf::TensorInfo& embd = f.tensor("token_embd.weight");
  check(embd.ne.size() == 2, "tensor 'token_embd' has {} dimensions, a [vocab, hidden] table has 2", embd.ne.size());
  p.vocab = embd.n_rows();
  // The program's weight kind is the checkpoint's q projection's; every matrix must be of it.
  p.kind = f.tensor(fmt::format("blk.{}.attn_q", first) + ".weight").kind();
  graph::check_params(program, p);

  // The program's names (blk.0..) from the checkpoint's (blk.first.., with llama.cpp's ".weight").
  TensorMap weights;
  for (const graph::WeightSpec& s : graph::program_weights(program, p)) {
    std::string src = s.name;
    if (src.rfind("blk.", 0) == 0) {
      const size_t dot = src.find('.', 4);
      src = fmt::format("blk.{}{}", first + int_flag(src.substr(4, dot - 4), "layer"), src.substr(dot));
    }
    src += ".weight";
    const gguf::TensorInfo* t = h.tensor(src);
    check(t != nullptr, "{}: the checkpoint has no tensor '{}' ({} needs it)", f.path(), src, program);
    const QuantKind k = t->kind();
    const Shape want = {s.use == graph::WeightSpec::Use::Norm ? 1 : s.n, s.use == graph::WeightSpec::Use::Norm ? p.hidden : s.k};
    const Shape got = t->ne.size() == 1 ? Shape{1, t->ne[0]} : t->shape();
    check(got == want, "tensor '{}' has shape {}, {} with these parameters needs {}", src, shape_str(t->shape()), program,
          shape_str(s.use == graph::WeightSpec::Use::Norm ? Shape{p.hidden} : Shape{s.n, s.k}));
    Tensor x(s.dtype, s.shape);
    if (s.use == graph::WeightSpec::Use::Matrix) {
      check(k == p.kind, "tensor '{}' is {}, the other matrices {} (a {} program has one weight kind)", src, enum_name(k),
            enum_name(p.kind), program);
      check(x.nbytes() == t->bytes, "tensor '{}': {} bytes in the file, {} needs {}", src, t->bytes, program, x.nbytes());
      f.read(*t, x.data());  // the checkpoint's bytes, unchanged
    } else {
      // Norms and the embedding in the activation dtype: llama.cpp stores norms in F32 and a
      // quantized embedding in blocks, which a lookup dequantizes; both exactly as ggml decodes them.
      std::vector<float> values(static_cast<size_t>(x.numel()));
      const std::vector<uint8_t> bytes = f.read(*t);
      if (const quant::Format* q = quant::format(k)) {
        q->dequantize_row(bytes.data(), values.data(), x.numel());
      } else {
        check(k == QuantKind::F32 || k == QuantKind::F16, "tensor '{}' is {}; {} reads norms and the embedding in F32, F16 or a GGUF block kind",
              src, enum_name(k), program);
        Tensor raw(storage_dtype(k), s.shape);
        check(raw.nbytes() == bytes.size(), "tensor '{}': {} bytes in the file, {} {} needs {}", src, bytes.size(),
              enum_name(k), shape_str(s.shape), raw.nbytes());
        std::memcpy(raw.data(), bytes.data(), bytes.size());
        for (int64_t i = 0; i < x.numel(); ++i) values[static_cast<size_t>(i)] = static_cast<float>(raw.get(i));
      }
      for (int64_t i = 0; i < x.numel(); ++i) x.set(i, values[static_cast<size_t>(i)]);
    }
    weights.emplace(s.name, std::move(x));
  }
  const uint64_t seed = seed_flag(a.get("seed"), program + "/" + model);
  const graph::GraphCase c = graph::graph_case_with_weights(program, p, std::move(weights), seed);
  write_safetensors(out, graph::graph_case_to_file(c));
  std::cout << fmt::format("wrote {} ({} {}, layers {}-{} of {}, {} steps from position {}, seed {})\n", out, program,
                           graph::shape_name(p), first, last, f.path(), steps, p.ctx, seed);
  return 0;
}

}  // namespace

int cmd_graph(const std::vector<std::string>& argv) {
  Args a(argv, {"program", "layers", "steps", "out", "ctx", "block-size", "seed"}, {});
  const std::string sub = a.positional().empty() ? "" : a.positional()[0];
  if (sub == "case") return write_case(a);
  fail("usage: touchstone graph case MODEL.gguf --program llama_decode --layers A-B --steps N --out CASE "
       "[--ctx C] [--block-size B] [--seed S]");
}

}  // namespace ts::cli
