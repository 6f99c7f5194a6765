// A plug-in built against another plug-in interface: the CLI refuses it before it registers.
#include <stalesgd/plugin.hpp>

extern "C" int stalesgd_plugin_abi() {
  return STALESGD_PLUGIN_ABI + 1;
}
extern "C" void stalesgd_plugin_register(stalesgd::Status* status) {
  *status = {};
}
