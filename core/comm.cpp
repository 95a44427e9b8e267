#include "core/comm.h"

#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace ts {

namespace {

class SingleRank final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string describe() const override { return "one process"; }
  void all_reduce(const void* send, void* recv, int64_t n, DType dt, ReduceOp) override { copy(send, recv, n, dt); }
  void all_gather(const void* send, void* recv, int64_t n, DType dt) override { copy(send, recv, n, dt); }
  void broadcast(void*, int64_t, DType, int src) override {
    check(src == 0, "broadcast from rank {} in a world of one rank", src);
  }
  std::vector<std::string> all_gather_text(const std::string& mine) override { return {mine}; }
  void barrier() override {}

 private:
  static void copy(const void* send, void* recv, int64_t n, DType dt) {
    if (send != recv && n > 0) std::memmove(recv, send, static_cast<size_t>(n) * dtype_size(dt));
  }
};

std::unique_ptr<Communicator>& world_slot() {
  static std::unique_ptr<Communicator> w = single_rank_world();
  return w;
}

}  // namespace

std::unique_ptr<Communicator> single_rank_world() { return std::make_unique<SingleRank>(); }

Communicator& world() { return *world_slot(); }
void set_world(std::unique_ptr<Communicator> w) { world_slot() = std::move(w); }

void agree_or_throw(const std::string& my_error) {
  Communicator& w = world();
  if (w.size() == 1) {
    if (!my_error.empty()) throw RanksAgreedError(my_error);
    return;
  }
  // A leading '!' marks an error, so that an empty message still counts as one.
  const std::vector<std::string> all = w.all_gather_text(my_error.empty() ? "" : "!" + my_error);
  for (size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty())
      throw RanksAgreedError(r == 0 ? all[r].substr(1) : fmt::format("rank {}: {}", r, all[r].substr(1)));
}

}  // namespace ts
