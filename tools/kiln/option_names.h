// Errors as a command-line user reads them: the library names a setting by its field
// ("[iterations_per_loop] ..."), the user typed an option ("--iterations-per-loop").
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace kiln::cli {

// `message` with its leading "[field]" context replaced by the option of `cmd` that sets
// the field, "[--option]", when there is one; otherwise unchanged.
std::string with_option_names(const std::string& message, const CLI::App& cmd);

}  // namespace kiln::cli
