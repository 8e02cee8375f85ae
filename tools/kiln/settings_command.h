// `kiln settings [--markdown]`: every environment variable kiln reads (kiln/base/settings.h),
// with the value this environment gives each; --markdown prints docs/settings.md.
#pragma once
#include <CLI/CLI.hpp>

namespace kiln::cli {

class SettingsCommand {
 public:
  explicit SettingsCommand(CLI::App& parent);
  bool selected() const { return cmd_->parsed(); }
  int run();

 private:
  CLI::App* cmd_;
  bool markdown_ = false;
};

}  // namespace kiln::cli
