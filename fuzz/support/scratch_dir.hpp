// A scratch directory for harnesses whose input names files (trace:<file> in delay specs),
// holding the trace file t.csv: $STALESGD_FUZZ_SCRATCH when set (tools/fuzz.sh sets a folder
// under the build folder, kept, since a crashing run never gets to clean up), else a fresh folder
// under the temp dir removed at a normal exit (a replay of one input).
#pragma once

#include <filesystem>

namespace stalesgd::fuzz {

// The directory; t.csv in it is a valid two-column trace ("w0[ms],w1[us]", two rows).
const std::filesystem::path& scratch_dir();

}  // namespace stalesgd::fuzz
