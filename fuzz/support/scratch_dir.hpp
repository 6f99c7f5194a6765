// A scratch directory for harnesses whose input names files (trace:<file> in delay specs): made
// once per process under the temp dir, holding the trace file t.csv, removed at exit.
#pragma once

#include <filesystem>

namespace stalesgd::fuzz {

// The directory; t.csv in it is a valid two-column trace ("w0[ms],w1[us]", two rows).
const std::filesystem::path& scratch_dir();

}  // namespace stalesgd::fuzz
