#include "core/tensor_parallel.h"

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "core/collective.h"
#include "core/ops/core_params.h"

namespace ts {

bool is_tensor_parallel(const Op& op) { return op.name() == "tp_gemm_pair"; }

namespace {

// The pair's three steps on one rank, as problems of the catalog's own ops.
struct PairSteps {
  Problem first, second, reduce;
};

PairSteps steps_of(const Problem& pr) {
  const auto& p = pr.params.as<TensorParallelGemmParams>();
  const int64_t h = p.shard();
  return {make_problem(op_or_throw("gemm"), Params::of(GemmParams{p.m, h, p.k}), pr.dtype),
          make_problem(op_or_throw("gemm"), Params::of(GemmParams{p.m, p.n, h}), pr.dtype),
          make_problem(op_or_throw("all_reduce"), Params::of(AllReduceParams{{p.world_size, p.m * p.n}, ReduceOp::Sum}),
                       pr.dtype)};
}

// The data of `from` into the data of `to` (the same element count and dtype; guards untouched).
void copy_data(const Tensor& from, Tensor& to) {
  check(from.nbytes() == to.nbytes() && from.dtype() == to.dtype(), "tensor-parallel pair: a step's tensor of {} "
        "bytes meets one of {}", from.nbytes(), to.nbytes());
  if (from.nbytes()) std::memcpy(to.data(), from.data(), from.nbytes());
}

class TensorParallelLaunch final : public Launch {
 public:
  TensorParallelLaunch(Backend& b, const Problem& pr, TensorMap& io)
      : io_(io), x_(rank_tensor("x", world().rank())), out_(rank_tensor("out", world().rank())) {
    agree_on_case(pr);  // the whole case, before the steps' own agreement on the all_reduce
    const auto& p = pr.params.as<TensorParallelGemmParams>();
    const int64_t h = p.shard();
    const int rank = world().rank();
    const PairSteps s = steps_of(pr);
    first_io_.emplace("a", io.at("x"));
    first_io_.emplace("b", io.at(rank_tensor("a", rank)));
    first_io_.emplace("out", Tensor(pr.dtype, {p.m, h}));
    second_io_.emplace("a", Tensor(pr.dtype, {p.m, h}));
    second_io_.emplace("b", io.at(rank_tensor("b", rank)));
    second_io_.emplace("out", Tensor(pr.dtype, {p.m, p.n}));
    reduce_io_.emplace(x_, Tensor(pr.dtype, {p.m * p.n}));
    reduce_io_.emplace(out_, Tensor(pr.dtype, {p.m * p.n}));
    first_ = b.prepare(s.first, first_io_);
    second_ = b.prepare(s.second, second_io_);
    reduce_ = b.prepare(s.reduce, reduce_io_);
  }

  void execute() override {
    const auto t0 = std::chrono::steady_clock::now();
    first_->execute();
    first_->finish();
    copy_data(first_io_.at("out"), second_io_.at("a"));
    second_->upload_inputs();
    second_->execute();
    second_->finish();
    copy_data(second_io_.at("out"), reduce_io_.at(x_));
    reduce_->upload_inputs();  // the ranks agree again on the all_reduce, then it moves data
    reduce_->execute();
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double last_seconds() const override { return seconds_; }

  void finish() override {
    reduce_->finish();
    copy_data(reduce_io_.at(out_), io_.at(out_));
  }

  // A new step's x and shards (the same shapes): into the first and second gemms' inputs.
  void upload_inputs() override {
    const int rank = world().rank();
    copy_data(io_.at("x"), first_io_.at("a"));
    copy_data(io_.at(rank_tensor("a", rank)), first_io_.at("b"));
    copy_data(io_.at(rank_tensor("b", rank)), second_io_.at("b"));
    first_->upload_inputs();
    second_->upload_inputs();
  }

 private:
  TensorMap& io_;
  std::string x_, out_;  // the all_reduce's tensors of this rank
  TensorMap first_io_, second_io_, reduce_io_;
  std::unique_ptr<Launch> first_, second_, reduce_;
  double seconds_ = 0;
};

}  // namespace

Support tensor_parallel_support(Backend& b, const Problem& pr) {
  if (const Support w = world_runs(pr); !w.ok) return w;
  const PairSteps s = steps_of(pr);
  for (const auto& [what, step] : {std::pair<const char*, const Problem*>{"the column-parallel gemm", &s.first},
                                   {"the row-parallel gemm", &s.second},
                                   {"the all_reduce", &s.reduce}})
    if (const Support ok = b.supports(*step); !ok.ok) return Support::no(fmt::format("{}: {}", what, ok.reason));
  return Support::yes();
}

std::unique_ptr<Launch> prepare_tensor_parallel(Backend& b, const Problem& pr, TensorMap& io) {
  return std::make_unique<TensorParallelLaunch>(b, pr, io);
}

}  // namespace ts
