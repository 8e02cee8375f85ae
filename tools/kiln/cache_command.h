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
  // Returns the exit status: verify gives 1 when an entry or the directory is bad.
  int run();

 private:
  CLI::App* cmd_;
  std::string action_;
  std::string dir_;
  std::string max_size_;
  bool json_ = false;
};

}  // namespace kiln::cli
