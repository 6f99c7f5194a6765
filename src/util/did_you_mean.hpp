// " (did you mean 'lr_rule'?)": the closest of a list of known words to a misspelt one, for the
// one-line errors of unknown keys (--set, experiment files, run.toml, Python keyword arguments).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stalesgd {

// The first of `candidates` fewest edits (Levenshtein) from `word`, when it is a few letters off
// (at most max(2, |word| / 3) edits), as " (did you mean 'CANDIDATE'?)"; else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace stalesgd
