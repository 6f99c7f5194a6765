// register_model: models of a user's own, made by name like the built-in ones (model.hpp).
#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "model/architectures.hpp"
#include "stalesgd/model/model.hpp"

namespace stalesgd {
namespace {

struct Registered {
  std::string name;
  ModelFactory factory;
};

// Registered before training starts and read when a run builds its model, possibly from
// several threads (race --jobs): a mutex, and copies out.
std::mutex g_mutex;
std::vector<Registered> g_models;

}  // namespace

Status register_model(const std::string& name, ModelFactory factory) {
  if (name.empty() || name.find_first_of(": \t\n") != std::string::npos) {
    return Error{
        fmt::format("register_model: '{}' is not a model name (non-empty, without ':' "
                    "or spaces)",
                    name)};
  }
  const auto& builtin = model_names();
  if (std::find(builtin.begin(), builtin.end(), name) != builtin.end()) {
    return Error{
        fmt::format("register_model: '{}' is a built-in model; choose another name", name)};
  }
  if (!factory) return Error{fmt::format("register_model: '{}' has no factory", name)};
  std::lock_guard lock(g_mutex);
  for (const auto& r : g_models) {
    if (r.name == name) {
      return Error{fmt::format("register_model: '{}' is registered already", name)};
    }
  }
  g_models.push_back({name, std::move(factory)});
  return {};
}

std::vector<std::string> registered_model_names() {
  std::lock_guard lock(g_mutex);
  std::vector<std::string> names;
  for (const auto& r : g_models) names.push_back(r.name);
  return names;
}

namespace model {

std::optional<ModelFactory> registered_factory(std::string_view name) {
  std::lock_guard lock(g_mutex);
  for (const auto& r : g_models) {
    if (r.name == name) return r.factory;
  }
  return std::nullopt;
}

}  // namespace model
}  // namespace stalesgd
