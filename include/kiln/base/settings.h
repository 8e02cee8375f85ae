// Every environment variable kiln reads, in one table: its name, what values are valid,
// its default, one line of what it does, and the layer that reads it. kiln's own
// (KILN_*) and other programs' that kiln also obeys (TMPDIR, OpenMP's, the MPI
// launcher's) alike. docs/settings.md is generated from it (`kiln settings --markdown`;
// tests/base/settings_test.cpp fails when the page and the table differ), and nothing
// in kiln reads the environment but setting_value() (the same test fails on a getenv
// elsewhere). Python reads the same table through kiln._core.
//
// Options given in code or on the command line win over the environment (flag > config >
// environment > default): a command-line flag sets its config field, and the field,
// when unset, takes the environment's value through setting_or() -- the one place that
// rule is coded. Options are resolved at the edge (RunConfig's cache settings,
// with_environment_defaults() for CompileOptions, the `kiln` command) before any compile;
// values are read when they are needed, not copied at start, so a process (a test) may
// set a variable before the first use.
//
// Two kinds are read where they act, by design: the test failpoints (KILN_*_FAILPOINT,
// no option exists for them; threading a test-only field through production interfaces
// would be worse) and the process-wide modes that have no per-graph meaning
// (KILN_FLUSH_DENORMALS, the OpenMP and MPI launcher variables of src/process and src/dist).
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
// `given` (a flag's or a config field's value) when it is not empty, else the
// environment's value of `name`, else "": the precedence rule, coded once.
std::string setting_or(std::string_view name, std::string given);
// A whole number from `min` to `max` (nullopt when unset or empty); ConfigError
// "[NAME] 'text' is not ...; valid: ..." otherwise. Parsed as an integer, never through a
// double.
std::optional<int64_t> setting_integer(std::string_view name, int64_t min, int64_t max);
// A positive, finite number (nullopt when unset or empty); ConfigError otherwise.
std::optional<double> setting_positive_number(std::string_view name);

// docs/settings.md: the table as a Markdown page.
std::string settings_markdown();

}  // namespace kiln
