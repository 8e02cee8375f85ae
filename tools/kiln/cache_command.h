// `kiln cache stats|list|verify|prune|clear --dir DIR [--max-size SIZE] [--json]`:
// inspect and manage the persistent compile cache (kiln/cache/compile_cache.h); with --remote,
// its remote tier (--remote-cache URL --remote-cache-key-file FILE): prune there removes
// the entries a compile would refuse, clear every entry of kiln's (no other key).
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
  int run_remote();
  CLI::App* cmd_;
  std::string action_;
  std::string dir_;
  std::string max_size_;
  bool json_ = false;
  bool remote_ = false;
  std::string remote_url_, remote_key_file_;
};

}  // namespace kiln::cli
