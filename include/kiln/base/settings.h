// Every environment variable kiln reads, in one table: its name, what values are valid,
// its default, one line of what it does, and the layer that reads it. kiln's own
// (KILN_*) and other programs' that kiln also obeys (TMPDIR, OpenMP's, the MPI
// launcher's) alike. docs/settings.md is generated from it (`kiln settings --markdown`;
// tests/base/settings_test.cpp fails when the page and the table differ), and nothing
// in kiln reads the environment but setting_value() (the same test fails on a getenv
// elsewhere). Python reads the same table through kiln._core.
//
// Options given in code or on the command line win over the environment: each reader
// takes the environment's value only when its option is unset (flag > config >
// environment > default). Values are read when they are needed, not copied at start, so
// a process (a test) may set a variable before the first use.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct Setting {
  const char* name;
  const char* valid;     // the valid values, in words
  const char* fallback;  // what holds when it is unset, in words
  const char* doc;       // one line: what it does
  const char* layer;     // the part of kiln that reads it (src/<layer>, python, tools)
  bool owned;            // false: another program's variable that kiln also obeys
};

// The table, in the order of docs/settings.md.
const std::vector<Setting>& settings_table();
// The entry of `name`; InternalError for a name not in the table (every read names one).
const Setting& setting(std::string_view name);

// The environment's value of a setting, nullopt when unset: the one place kiln calls
// getenv.
std::optional<std::string> setting_value(std::string_view name);
// The value, or "" when unset (a path or a text).
std::string setting_text(std::string_view name);
// A whole number from `min` to `max` (nullopt when unset or empty); ConfigError
// "[NAME] 'text' is not ...; valid: ..." otherwise. Parsed as an integer, never through a
// double.
std::optional<int64_t> setting_integer(std::string_view name, int64_t min, int64_t max);
// A positive, finite number (nullopt when unset or empty); ConfigError otherwise.
std::optional<double> setting_positive_number(std::string_view name);

// docs/settings.md: the table as a Markdown page.
std::string settings_markdown();

}  // namespace kiln
