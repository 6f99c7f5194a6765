// A held-out validation split: the last N samples of a training split moved out of it, so that
// a learning rate can be chosen on data the run never trains on without looking at the test
// split (docs/paper/tuned-learning-rates.md).
#pragma once

#include <cstddef>

#include "stalesgd/data/dataset.hpp"
#include "stalesgd/util/result.hpp"

namespace stalesgd {

// `data` with its last `n` training samples as `val` and the rest as `train`; the test split and
// the identity (digest) as they were. n = 0 gives a copy with an empty `val`. An error names
// the sizes when n leaves no training sample.
Result<Dataset> with_holdout(const Dataset& data, std::size_t n);

}  // namespace stalesgd
