// `stalesgd --man`: the manual page stalesgd(1), in roff, generated from the same option tables
// that --help prints (the train flags from config/train_option_decls.cpp, each command's own from
// its parser), so that it cannot drift from them. The build writes it and `cmake --install` puts it
// in share/man/man1/ (docs/install.md).
#pragma once

#include <cxxopts.hpp>

#include <string>
#include <vector>

namespace stalesgd::cli {

// While the page is being written: a command's --help adds its section instead of printing.
bool writing_man_page();
void add_man_section(const cxxopts::Options& options, const std::vector<std::string>& groups);

// Prints the whole page; `usage` is the synopsis `stalesgd --help` prints.
int print_man_page(const std::string& usage);

}  // namespace stalesgd::cli
