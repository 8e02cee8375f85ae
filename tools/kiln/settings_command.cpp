#include "settings_command.h"

#include <cstdio>
#include <iostream>

#include "kiln/base/printable.h"
#include "kiln/base/settings.h"

namespace kiln::cli {

SettingsCommand::SettingsCommand(CLI::App& parent) {
  cmd_ = parent.add_subcommand("settings", "List the environment variables kiln reads, and their values here");
  cmd_->add_flag("--markdown", markdown_, "Print the table as docs/settings.md instead");
}

int SettingsCommand::run() {
  if (markdown_) {
    std::cout << settings_markdown();
    return 0;
  }
  for (const Setting& s : settings_table()) {
    const auto value = setting_value(s.name);
    // A password is never printed, only whether it is set.
    const bool secret = std::string_view(s.name) == "KILN_REMOTE_CACHE_PASSWORD";
    std::printf("%-32s %s\n", s.name,
                !value ? ("unset (" + std::string(s.fallback) + ")").c_str()
                : secret ? "set (not shown)"
                         : ("= " + printable(*value)).c_str());
  }
  return 0;
}

}  // namespace kiln::cli
