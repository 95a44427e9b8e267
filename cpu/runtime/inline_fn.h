#pragma once
// A callable held in place: what std::function is for a small lambda of pointers and sizes, with no
// heap behind it (std::function allocates past two pointers' worth of captures), so a kernel that
// builds a few per call allocates nothing. The lambda must fit Cap bytes and be trivially copyable.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace ts::cpu {

template <class Sig, size_t Cap = 64> class InlineFn;

template <class R, class... A, size_t Cap> class InlineFn<R(A...), Cap> {
 public:
  InlineFn() = default;
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, InlineFn> && std::is_invocable_r_v<R, const std::decay_t<F>&, A...>)
  InlineFn(F&& f) {  // NOLINT: implicit, as std::function's
    using D = std::decay_t<F>;
    static_assert(sizeof(D) <= Cap && alignof(D) <= alignof(std::max_align_t), "InlineFn: captures too large");
    static_assert(std::is_trivially_copyable_v<D> && std::is_trivially_destructible_v<D>,
                  "InlineFn: captures must be trivially copyable (pointers, references, numbers)");
    ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
    call_ = [](const void* o, A... a) -> R { return (*static_cast<const D*>(o))(std::forward<A>(a)...); };
  }
  explicit operator bool() const { return call_ != nullptr; }
  R operator()(A... a) const { return call_(buf_, std::forward<A>(a)...); }

 private:
  alignas(std::max_align_t) unsigned char buf_[Cap];
  R (*call_)(const void*, A...) = nullptr;
};

}  // namespace ts::cpu
