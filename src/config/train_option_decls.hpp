// `stalesgd train`'s own options (train_option_decls.cpp), which the option table
// (option_table.hpp) holds first, before the registered rules' own.
#pragma once

#include <deque>

#include "config/option_table.hpp"

namespace stalesgd {

// Every option of train's own, in --help order, each declared once.
std::deque<OptionDecl> train_option_decls();

}  // namespace stalesgd
