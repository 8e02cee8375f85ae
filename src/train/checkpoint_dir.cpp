// A model_dir of checkpoints: naming, listing, retention, the writability probe.
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
}  // namespace

CheckpointDir::CheckpointDir(std::string dir, int64_t keep) : dir_(std::move(dir)), keep_(keep) {}

void CheckpointDir::prepare() const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_))
    KILN_THROW(CheckpointError) << "[model_dir] cannot create directory '" << dir_ << "': "
                                << (ec ? ec.message() : "a file of that name exists");
  const std::string probe = (fs::path(dir_) / (".tmp-" + std::to_string(::getpid()) + "-probe")).string();
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) KILN_THROW(CheckpointError) << "[model_dir] '" << dir_ << "' is not writable: " << std::strerror(errno);
  std::fclose(f);
  std::remove(probe.c_str());
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
  // Temporary files of runs that died mid-write (ours was renamed away already).
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind(".tmp-", 0) == 0) fs::remove(it->path(), ec);
  if (keep_ > 0) {
    const auto all = steps();
    for (size_t i = 0; i + static_cast<size_t>(keep_) < all.size(); ++i) fs::remove(path_for(all[i]), ec);
  }
}

}  // namespace kiln
