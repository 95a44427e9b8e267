// The runtime backend registry (declared in core/backend.h). Part of touchstone_backends, beside
// the list of built-in backends (builtin.cpp) it registers on first use.
#include <mutex>

#include "core/backend.h"

namespace ts {

namespace {
struct Entry {
  std::string name;
  BackendFactory factory;
  std::unique_ptr<Backend> instance;
};
std::vector<Entry>& registry() {
  static std::vector<Entry> r;
  return r;
}
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
void register_builtin_once();
}  // namespace

void register_backend(const std::string& name, BackendFactory factory) {
  std::lock_guard lock(registry_mutex());
  for (auto& e : registry())
    check(e.name != name, "backend '{}' registered twice", name);
  registry().push_back({name, std::move(factory), nullptr});
}

std::vector<std::string> backend_names() {
  register_builtin_once();
  std::vector<std::string> n;
  for (auto& e : registry()) n.push_back(e.name);
  return n;
}

Backend* find_backend(const std::string& name) {
  register_builtin_once();
  std::lock_guard lock(registry_mutex());
  for (auto& e : registry())
    if (e.name == name) {
      if (!e.instance) e.instance = e.factory();
      return e.instance.get();
    }
  return nullptr;
}

Backend& backend(const std::string& name) {
  Backend* b = find_backend(name);
  if (!b) {
    std::string known;
    for (auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
    fail("unknown backend '{}' (known: {})", name, known);
  }
  return *b;
}

void register_builtin_backends();  // builtin.cpp: the backends this build includes

namespace {
void register_builtin_once() {
  static std::once_flag once;
  std::call_once(once, [] { register_builtin_backends(); });
}
}  // namespace

}  // namespace ts
