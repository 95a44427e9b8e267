#pragma once
// How a backend's step is judged against the reference (docs/catalog.md, "Family graph"): node by
// node, each op's outputs against the reference's run of that op on the same inputs the backend's op
// had, under that op's own tolerance (the backend's where it states one, as the matrix does). The
// step's tolerance is therefore exactly its ops', each printed with its derivation; no bound is
// invented for the error's growth through the layers.
#include <map>
#include <string>

#include "graph/graph.h"

namespace ts::graph {

class NodeJudge {
 public:
  explicit NodeJudge(Backend& b) : b_(b) {}
  NodeObserver observer();

  int64_t judged() const { return judged_; }
  int64_t failed() const { return failed_; }
  const std::string& failures() const { return failures_; }  // a report per failing node
  // Each op variant's tolerance with its derivation, as its first node was judged (each node is judged
  // by its own): "gemm_quant kind=Q4_K out: atol=... (...)".
  std::string tolerances() const;

 private:
  Backend& b_;
  int64_t judged_ = 0, failed_ = 0;
  std::string failures_;
  std::map<std::string, std::string> tolerances_;
};

}  // namespace ts::graph
