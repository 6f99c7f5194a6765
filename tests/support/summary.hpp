// A run folder's summary.json, parsed (its own header: nlohmann-json is slow to compile, and most
// tests including fixtures.hpp do not read it).
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace stalesgd::test {

// DIR/summary.json; the test fails where the file cannot be opened.
nlohmann::json read_summary(const std::filesystem::path& dir);

}  // namespace stalesgd::test
