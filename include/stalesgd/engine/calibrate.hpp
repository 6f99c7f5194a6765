// Calibration: the machine model's numbers for one model on this machine (docs/machine.md). C is
// one minibatch gradient on real data; the server's time per gradient and per update are
// ServerCore's own steps (the arithmetic every engine's server runs) timed on the model's size.
#pragma once

#include "stalesgd/config/trainer_options.hpp"
#include "stalesgd/data/dataset.hpp"
#include "stalesgd/machine/machine.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

struct ServerTiming {
  double gradient_s = 0.0;  // ServerCore's step for a gradient that starts no update
  double update_s = 0.0;    // what an update adds to it
};

// Times ServerCore for `options`' model on `data`: async (an update per gradient) and k-async
// with K = P = 64 (an update per 64), about `budget_s` in all; per gradient and per update from
// the two means.
Result<ServerTiming> measure_server_time(const TrainerOptions& options, const Dataset& data,
                                         double budget_s = 0.5);

// The server's times, C and the cores' contention, and the model's size: a machine with a core
// per worker and no link, for `options`' model (Machine::model its name). C is what the thread
// engine's worker spends per gradient: its time per update at P = 1 (async, no delay) less the
// server's; the contention is the time per gradient with every core of this machine busy
// (P = cores) over that. `budget_s` bounds the time spent measuring.
Result<Machine> calibrate(const TrainerOptions& options, const Dataset& data,
                          double budget_s = 2.0);

}  // namespace stalesgd
