// A model_dir of checkpoints: naming, listing, retention, the writability probe.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "kiln/checkpoint.h"

namespace fs = std::filesystem;

namespace kiln {
namespace {
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kSuffix = ".kiln";

std::optional<int64_t> step_of(const std::string& file) {
  const size_t p = std::strlen(kPrefix), s = std::strlen(kSuffix);
  if (file.size() <= p + s || file.rfind(kPrefix, 0) != 0 || file.substr(file.size() - s) != kSuffix) return {};
  const std::string digits = file.substr(p, file.size() - p - s);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit) || digits.size() > 18) return {};
  return std::stoll(digits);
}

// The pid in a temporary file name ".tmp-<pid>-...", as write_checkpoint and prepare make them.
std::optional<pid_t> temp_owner(const std::string& file) {
  if (file.rfind(".tmp-", 0) != 0) return {};
  const size_t dash = file.find('-', 5);
  if (dash == std::string::npos || dash == 5 || dash - 5 > 9) return {};
  const std::string digits = file.substr(5, dash - 5);
  if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) return {};
  return static_cast<pid_t>(std::stol(digits));
}

bool process_exists(pid_t pid) { return pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM; }
}  // namespace

CheckpointDir::CheckpointDir(std::string dir, int64_t keep) : dir_(std::move(dir)), keep_(keep) {}

void CheckpointDir::prepare(std::shared_ptr<ModelDirLock> held) {
  lock_ = held && held->covers(dir_) ? std::move(held) : ModelDirLock::acquire(dir_);  // creates the directory
  const std::string probe = (fs::path(dir_) / (".tmp-" + std::to_string(::getpid()) + "-probe")).string();
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) KILN_THROW(CheckpointError) << "[model_dir] '" << dir_ << "' is not writable: " << std::strerror(errno);
  std::fclose(f);
  if (std::remove(probe.c_str()) != 0)
    KILN_THROW(CheckpointError) << "[model_dir] cannot remove '" << probe << "': " << std::strerror(errno);
}

std::vector<int64_t> CheckpointDir::steps() const {
  std::vector<int64_t> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (auto s = step_of(it->path().filename().string())) out.push_back(*s);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int64_t> CheckpointDir::latest_step() const {
  const auto s = steps();
  if (s.empty()) return {};
  return s.back();
}

std::string CheckpointDir::path_for(int64_t step) const {
  char name[64];
  std::snprintf(name, sizeof name, "%s%012lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return (fs::path(dir_) / name).string();
}

std::optional<Checkpoint> CheckpointDir::load_latest() const {
  // A directory or a FIFO under a checkpoint's name would fail the save that replaces it,
  // after training: refuse it now, whichever step it names.
  for (const int64_t s : steps()) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::status(path_for(s), ec)))
      KILN_THROW(CheckpointError) << "[model_dir] '" << path_for(s)
                                  << "' is not a regular file; names ckpt-<step>.kiln are kiln's checkpoints: "
                                     "move it out of the model directory";
  }
  const auto step = latest_step();
  if (!step) return {};
  Checkpoint c = read_checkpoint(path_for(*step));
  if (c.step != *step)
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path_for(*step) << "' holds step " << c.step
                                << ", not the step in its name";
  return c;
}

void CheckpointDir::save(const Checkpoint& ckpt) const {
  write_checkpoint(path_for(ckpt.step), ckpt);
  std::error_code ec;
  // Temporary files of runs that died mid-write (ours was renamed away already). Only under
  // the lock: then no other run that locks is writing here, and a pid that does not exist
  // on this machine is not writing either (an old kiln that does not lock could be).
  if (lock_)
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
      if (const auto pid = temp_owner(it->path().filename().string()); pid && !process_exists(*pid))
        fs::remove(it->path(), ec);
  if (keep_ > 0) {
    const auto all = steps();
    for (size_t i = 0; i + static_cast<size_t>(keep_) < all.size(); ++i)
      if (fs::is_regular_file(fs::symlink_status(path_for(all[i]), ec))) fs::remove(path_for(all[i]), ec);
  }
}

}  // namespace kiln
