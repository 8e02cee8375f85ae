// `kiln cache stats|list|verify|prune|clear --dir DIR [--max-size SIZE] [--json]`:
// inspect and manage the persistent compile cache (kiln/compile_cache.h).
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace kiln::cli {

class CacheCommand {
 public:
  explicit CacheCommand(CLI::App& parent);
  bool selected() const { return cmd_->parsed(); }
  // Returns the exit status: verify gives 1 when an entry or the directory is bad; prune and
  // clear give 1 when removing something of kiln's failed, and refuse (ConfigError, exit 2)
  // a directory that is not kiln's cache. Both list what they kept and why.
  int run();

 private:
  CLI::App* cmd_;
  std::string action_;
  std::string dir_;
  std::string max_size_;
  bool json_ = false;
};

}  // namespace kiln::cli
