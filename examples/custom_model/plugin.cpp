// The hand-written softmax of hand_softmax.hpp as a plug-in of the `stalesgd` CLI
// (stalesgd/plugin.hpp): `stalesgd train --plugin libhand_softmax.so --model hand-softmax ...`,
// on every command and every MPI rank, as the built-in models are.
#include <stalesgd/plugin.hpp>

#include "hand_softmax.hpp"

STALESGD_PLUGIN(register_hand_softmax)
