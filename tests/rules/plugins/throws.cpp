// A plug-in whose registration throws: the CLI catches it and refuses the plug-in in one line.
#include <stdexcept>

#include <stalesgd/plugin.hpp>

namespace {

stalesgd::Status register_throwing() {
  throw std::runtime_error("the plug-in's configuration file is missing");
}

}  // namespace

STALESGD_PLUGIN(register_throwing)
