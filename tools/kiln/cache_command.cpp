#include "cache_command.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include <nlohmann/json.hpp>

#include "kiln/cache/cache_settings.h"
#include "kiln/cache/compile_cache.h"
#include "kiln/train/config.h"
#include "kiln/base/error.h"
#include "kiln/base/printable.h"
#include "kiln/base/settings.h"

namespace kiln::cli {
namespace {

// A time from the metadata ("?" for unknown: the reader keeps only times a calendar holds,
// and localtime_r still reports what it cannot convert).
std::string when(double t) {
  if (!(t > 0)) return "?";
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  char buf[64];
  if (!::localtime_r(&s, &tm) || std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) == 0) return "?";
  return buf;
}

nlohmann::json json_of(const CacheEntry& e) {
  nlohmann::json j = {{"key", e.key},         {"dir", e.dir},       {"bytes", e.bytes},
                      {"created", e.created}, {"last_used", e.last_used}, {"hits", e.hits},
                      {"compile_seconds", e.compile_seconds}, {"precision", e.precision},
                      {"graph_nodes", e.graph_nodes}};
  return j;
}

// Every text printed here came from outside (file names in the cache directory, metadata,
// Redis keys): printable() keeps a writer of them from forging lines or escape codes.
void print_entry(const CacheEntry& e) {
  std::printf("%s  %9s  %-16s %6lld nodes  compile %.2fs  hits %lld  created %s  last used %s%s%s\n",
              printable(e.key).c_str(), format_byte_size(e.bytes).c_str(),
              e.precision.empty() ? "?" : printable(e.precision).c_str(),
              static_cast<long long>(e.graph_nodes), e.compile_seconds, static_cast<long long>(e.hits),
              when(e.created).c_str(), when(e.last_used).c_str(), e.problem.empty() ? "" : "  BAD: ",
              printable(e.problem).c_str());
}

}  // namespace

CacheCommand::CacheCommand(CLI::App& parent) {
  cmd_ = parent.add_subcommand("cache", "Inspect and manage the compile cache (graph_compiler_cache_dir)");
  cmd_->add_option("action", action_, "stats | list | verify | prune | clear")
      ->required()
      ->check(CLI::IsMember({"stats", "list", "verify", "prune", "clear"}));
  cmd_->add_option("--dir", dir_, "The cache directory (default: $KILN_CACHE_DIR)");
  cmd_->add_option("--max-size", max_size_, "prune: evict least recently used entries down to this size (default 2G)");
  cmd_->add_flag("--json", json_, "Machine-readable output");
  cmd_->add_flag("--remote", remote_,
                 "Act on the remote tier instead (prune: remove the entries a compile would refuse; clear: every "
                 "entry of kiln's)");
  cmd_->add_option("--remote-cache", remote_url_, "With --remote: redis[s]://[USER@]HOST[:PORT][/DB] (default: $KILN_REMOTE_CACHE; a password from $KILN_REMOTE_CACHE_PASSWORD_FILE)");
  cmd_->add_option("--remote-cache-key-file", remote_key_file_,
                   "With --remote: the key file its entries are signed with (default: $KILN_REMOTE_CACHE_KEY_FILE)");
}

int CacheCommand::run_remote() {
  remote_url_ = setting_or("KILN_REMOTE_CACHE", std::move(remote_url_));
  remote_key_file_ = setting_or("KILN_REMOTE_CACHE_KEY_FILE", std::move(remote_key_file_));
  if (remote_url_.empty()) KILN_THROW(ConfigError) << "[cache] --remote needs --remote-cache URL (or KILN_REMOTE_CACHE)";
  if (!max_size_.empty()) KILN_THROW(ConfigError) << "[cache] --max-size is for the local cache; the remote has no size cap";
  const RemoteCompileCache remote(remote_url_, remote_key_file_);
  if (action_ == "prune" || action_ == "clear") {
    const auto removed = remote.remove(action_ == "prune");
    if (json_) std::cout << nlohmann::json{{"remote", remote.url()}, {"removed", removed}}.dump() << "\n";
    else std::printf("removed %zu entries from %s\n", removed.size(), printable(remote.url()).c_str());
    return 0;
  }
  const auto entries = remote.entries();
  int64_t bytes = 0, bad = 0;
  for (const auto& e : entries) bytes += e.bytes, bad += !e.problem.empty();
  if (json_) {
    nlohmann::json j = {{"remote", remote.url()}, {"entries", nlohmann::json::array()}, {"bytes", bytes}, {"bad", bad}};
    if (action_ != "stats")
      for (const auto& e : entries) j["entries"].push_back({{"key", e.key}, {"bytes", e.bytes}, {"problem", e.problem}});
    else
      j["entries"] = entries.size();
    std::cout << j.dump() << "\n";
  } else if (action_ == "stats") {
    std::printf("remote %s: %zu entries, %s; %lld a compile would refuse\n", printable(remote.url()).c_str(), entries.size(),
                format_byte_size(bytes).c_str(), static_cast<long long>(bad));
  } else {
    for (const auto& e : entries)
      std::printf("%s  %9s%s%s\n", printable(e.key).c_str(), format_byte_size(e.bytes).c_str(),
                  e.problem.empty() ? "" : "  BAD: ", printable(e.problem).c_str());
    if (action_ == "verify")
      std::printf("%zu entries checked, %lld bad%s\n", entries.size(), static_cast<long long>(bad),
                  bad ? " (never loaded; the next compile replaces them)" : "");
  }
  return action_ == "verify" && bad ? 1 : 0;
}

int CacheCommand::run() {
  if (remote_) return run_remote();
  if (!remote_url_.empty() || !remote_key_file_.empty())
    KILN_THROW(ConfigError) << "[cache] --remote-cache and --remote-cache-key-file go with --remote";
  dir_ = setting_or("KILN_CACHE_DIR", std::move(dir_));
  if (dir_.empty()) KILN_THROW(ConfigError) << "[cache] --dir is required (or set KILN_CACHE_DIR)";
  const CompileCache cache(dir_);
  if (action_ == "stats") {
    const CacheStats s = cache.stats();
    if (json_) {
      std::cout << nlohmann::json{{"dir", dir_}, {"entries", s.entries}, {"bytes", s.bytes}, {"hits", s.hits},
                                  {"stores", s.stores}, {"seconds_saved", s.seconds_saved}}
                       .dump()
                << "\n";
    } else {
      std::printf("cache %s: %lld entries, %s; %lld hits, %lld stores (misses compiled); %.1fs of compiling saved\n",
                  printable(dir_).c_str(), static_cast<long long>(s.entries), format_byte_size(s.bytes).c_str(),
                  static_cast<long long>(s.hits), static_cast<long long>(s.stores), s.seconds_saved);
    }
    return 0;
  }
  if (action_ == "list" || action_ == "verify") {
    std::string dir_problem;
    const auto entries = action_ == "list" ? cache.list() : cache.verify(&dir_problem);
    int bad = dir_problem.empty() ? 0 : 1;
    for (const auto& e : entries) bad += !e.problem.empty();
    if (json_) {
      nlohmann::json j = {{"dir", dir_}, {"entries", nlohmann::json::array()}};
      for (const auto& e : entries) {
        nlohmann::json x = json_of(e);
        if (action_ == "verify") x["problem"] = e.problem;
        j["entries"].push_back(x);
      }
      if (action_ == "verify") j["directory_problem"] = dir_problem;
      std::cout << j.dump() << "\n";
    } else {
      for (const auto& e : entries) print_entry(e);
      if (!dir_problem.empty()) std::printf("directory: BAD: %s\n", printable(dir_problem).c_str());
      if (action_ == "verify")
        std::printf("%zu entries checked, %d bad%s\n", entries.size(), bad,
                    bad ? " (bad entries are never loaded; the next compile replaces them)" : "");
    }
    return action_ == "verify" && bad ? 1 : 0;
  }
  const CacheRemoval r = action_ == "prune"
                             ? cache.prune(max_size_.empty() ? kDefaultCacheSizeCap : parse_byte_size(max_size_, "--max-size"))
                             : cache.clear();
  const int64_t left = cache.stats().bytes;
  if (json_) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& k : r.kept) kept.push_back({{"path", k.path}, {"reason", k.reason}, {"error", k.error}});
    nlohmann::json j = {{action_ == "prune" ? "evicted" : "removed", r.removed},
                        {"staging_removed", r.staging_removed},
                        {"kept", kept},
                        {"bytes", left}};
    if (action_ == "clear") j["removed"] = r.removed.size();
    std::cout << j.dump() << "\n";
  } else {
    std::printf("%s %zu entries and %lld leftover staging directories; %s left\n",
                action_ == "prune" ? "evicted" : "removed", r.removed.size(), static_cast<long long>(r.staging_removed),
                format_byte_size(left).c_str());
    if (!r.kept.empty()) std::printf("kept (not deleted) %zu:\n", r.kept.size());
    for (const auto& k : r.kept) std::printf("  %s%s: %s\n", k.error ? "FAILED " : "", printable(k.path).c_str(),
                                    printable(k.reason).c_str());
  }
  return r.failed() ? 1 : 0;
}

}  // namespace kiln::cli
