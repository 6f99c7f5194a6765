// LibTorch's messages made into stalesgd's: one line that names the failure and where the
// module's code raised it, and the whole text for run.log (docs/models.md, "TorchScript models").
#pragma once

#include <exception>
#include <string>

namespace stalesgd::model {

// The message of any exception LibTorch throws, without its C++ backtrace.
std::string message_of(const std::exception& e);

// One line from a LibTorch message: the exception line a TorchScript traceback ends with
// ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x100 and 400x120)") and the
// innermost line of the module's code that raised it, with its file and line; the first line
// with text for a message that has no traceback.
std::string summary_line(const std::string& text);

}  // namespace stalesgd::model
