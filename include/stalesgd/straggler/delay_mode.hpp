// DelayMode: how a minibatch's injected delay X combines with its compute time C
// (docs/stragglers.md, "Delay mode"). The runtime theory is about X, so pad is the default.
#pragma once

namespace stalesgd {

enum class DelayMode {
  kPad,  // the minibatch takes max(C, X): the worker sleeps out what compute left of X
  kAdd,  // the minibatch takes C + X
};

inline const char* to_string(DelayMode mode) {
  return mode == DelayMode::kPad ? "pad" : "add";
}

}  // namespace stalesgd
