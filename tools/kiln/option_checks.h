// Checks for numeric options that say plainly what is wrong (CLI11's own print the whole
// double range for a non-number).
#pragma once
#include <cstdint>

#include <CLI/CLI.hpp>

namespace kiln::cli {

CLI::Validator whole_number(int64_t min);  // an integer >= min
// An integer in [min, max]: the documented range of a size option, shown in --help.
CLI::Validator whole_number(int64_t min, int64_t max);
CLI::Validator positive_real();            // a finite number > 0
CLI::Validator nonnegative_real();         // a finite number >= 0
CLI::Validator fraction();                 // a number in [0, 1)

}  // namespace kiln::cli
