// A model_dir of checkpoints: TensorFlow's names, listing, retention, the state file, the
// writability probe; kiln's older "ckpt-N.kiln" files read too.
#include <signal.h>
#include <unistd.h>

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/tensor_bundle.h"
#include "formats/bounded_json.h"
#include "kiln/train/checkpoint.h"
#include "kiln/ir/ops.h"
#include "formats/atomic_file.h"
#include "tf_bundle.pb.h"

namespace fs = std::filesystem;

namespace kiln {
namespace {
constexpr const char* kLegacyPrefix = "ckpt-";
constexpr const char* kLegacySuffix = ".kiln";
constexpr const char* kTfPrefix = "model.ckpt-";
constexpr const char* kIndexSuffix = ".index";
constexpr const char* kStateSuffix = ".kiln-state.json";
constexpr const char* kStateFile = "checkpoint";

std::optional<int64_t> digits_between(const std::string& file, const std::string& prefix, const std::string& suffix) {
  if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
    return {};
  const std::string digits = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit) || digits.size() > 18) return {};
  return std::stoll(digits);
}

// The pid in a temporary file name ".tmp-<pid>-...", as the writers make them.
std::optional<pid_t> temp_owner(const std::string& file) {
  if (file.rfind(".tmp-", 0) != 0) return {};
  const size_t dash = file.find('-', 5);
  if (dash == std::string::npos || dash == 5 || dash - 5 > 9) return {};
  const std::string digits = file.substr(5, dash - 5);
  if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) return {};
  return static_cast<pid_t>(std::stol(digits));
}

bool process_exists(pid_t pid) { return pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM; }

std::string read_small_file(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string s(limit + 1, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

}  // namespace

// --- one checkpoint in TensorFlow's format ------------------------------------------------

void write_tf_checkpoint(const std::string& prefix, const Checkpoint& ckpt) {
  const nlohmann::json state = {{"format", "kiln-checkpoint-state"}, {"version", 1}, {"global_step", ckpt.step},
                                {"kiln", KILN_VERSION}, {"state", ckpt.state}};
  // The state first, the bundle's index last: a checkpoint whose index exists is whole.
  write_file_atomically(prefix + kStateSuffix, state.dump() + "\n", "[checkpoint]");
  formats::write_bundle(prefix, std::map<std::string, Array>(ckpt.variables.begin(), ckpt.variables.end()),
                        WriteFailpoints{"KILN_CHECKPOINT_FAILPOINT", ckpt.step});
}

Checkpoint read_tf_checkpoint(const std::string& prefix) {
  Checkpoint c;
  std::map<std::string, Array> tensors = formats::read_bundle(prefix);
  for (auto& [k, v] : tensors) c.variables.emplace(k, std::move(v));
  for (const formats::BundleEntry& e : formats::list_bundle(prefix))
    if (!e.readable) c.unread.emplace(e.name, e.dtype);
  const std::string state_path = prefix + kStateSuffix;
  std::error_code ec;
  const auto gs = c.variables.find("global_step");
  if (fs::exists(state_path, ec)) {
    std::string why;
    const nlohmann::json j = parse_bounded_json(read_small_file(state_path, 1 << 20), JsonLimits{1 << 20, 16}, &why);
    if (j.is_discarded() || !j.is_object() || !j.contains("global_step") || !j["global_step"].is_number_integer())
      KILN_THROW(CheckpointError) << "[checkpoint] '" << state_path << "' is not kiln's checkpoint state"
                                  << (why.empty() ? "" : " (" + why + ")");
    c.step = j["global_step"].get<int64_t>();
    if (j.contains("state")) {
      if (!j["state"].is_object()) KILN_THROW(CheckpointError) << "[checkpoint] '" << state_path << "': 'state' is not an object";
      c.state = j["state"];
    }
    if (gs != c.variables.end() && static_cast<int64_t>(gs->second.item()) != c.step)
      KILN_THROW(CheckpointError) << "[checkpoint] '" << prefix << "' holds global_step "
                                  << static_cast<int64_t>(gs->second.item()) << " but its kiln state says step " << c.step
                                  << ": the two files are of different checkpoints";
  } else if (gs != c.variables.end()) {
    c.step = static_cast<int64_t>(gs->second.item());  // written by TensorFlow
  }
  return c;
}

Checkpoint load_checkpoint(const std::string& path) {
  std::error_code ec;
  if (path.size() > std::strlen(kLegacySuffix) &&
      path.compare(path.size() - std::strlen(kLegacySuffix), std::string::npos, kLegacySuffix) == 0 &&
      !fs::exists(path + kIndexSuffix, ec))
    return read_checkpoint(path);
  std::string prefix = path;
  if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".index") == 0) prefix.resize(prefix.size() - 6);
  if (!formats::bundle_exists(prefix)) {
    if (fs::is_regular_file(path, ec)) return read_checkpoint(path);
    KILN_THROW(CheckpointError) << "[checkpoint] no checkpoint at '" << path << "' (neither '" << prefix
                                << ".index' nor a kiln checkpoint file)";
  }
  return read_tf_checkpoint(prefix);
}

// --- the directory --------------------------------------------------------------------------

CheckpointDir::CheckpointDir(std::string dir, int64_t keep) : dir_(std::move(dir)), keep_(keep) {}

void CheckpointDir::prepare(std::shared_ptr<ModelDirLock> held) {
  lock_ = held && held->covers(dir_) ? std::move(held) : ModelDirLock::acquire(dir_);  // creates the directory
  const std::string probe = (fs::path(dir_) / (".tmp-" + std::to_string(::getpid()) + "-probe")).string();
  FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) KILN_THROW(CheckpointError) << "[model_dir] '" << dir_ << "' is not writable: " << std::strerror(errno);
  std::fclose(f);
  if (std::remove(probe.c_str()) != 0)
    KILN_THROW(CheckpointError) << "[model_dir] cannot remove '" << probe << "': " << std::strerror(errno);
  remove_orphans();
}

// A checkpoint is visible once its index exists: a save writes the state and the data
// before it, a rotation removes it before them. A run killed in between (issue 61, item 13)
// leaves model.ckpt-N.kiln-state.json and .data-* without model.ckpt-N.index: no checkpoint,
// and a state that would be read as that of any later checkpoint N (one TensorFlow wrote,
// say). Removed only here, under the lock, where no other run is writing.
void CheckpointDir::remove_orphans() const {
  std::error_code ec;
  std::vector<fs::path> orphans;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::optional<int64_t> step = digits_between(name, kTfPrefix, kStateSuffix);
    if (!step && name.rfind(kTfPrefix, 0) == 0) {
      const size_t data = name.find(".data-");
      if (data != std::string::npos) step = digits_between(name.substr(0, data), kTfPrefix, "");
    }
    std::error_code ig;
    if (step && !fs::exists(fs::symlink_status(prefix_for(*step) + kIndexSuffix, ig)) &&
        fs::is_regular_file(fs::symlink_status(it->path(), ig)))
      orphans.push_back(it->path());
  }
  for (const fs::path& p : orphans)
    if (!fs::remove(p, ec) && ec)
      KILN_THROW(CheckpointError) << "[model_dir] cannot remove '" << p.string()
                                  << "', left without its checkpoint by a run that was killed: " << ec.message();
}

std::vector<int64_t> CheckpointDir::steps() const {
  std::vector<int64_t> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (auto s = digits_between(name, kTfPrefix, kIndexSuffix)) out.push_back(*s);
    else if (auto t = digits_between(name, kLegacyPrefix, kLegacySuffix)) out.push_back(*t);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<int64_t> CheckpointDir::latest_step() const {
  const auto s = steps();
  if (s.empty()) return {};
  return s.back();
}

std::string CheckpointDir::prefix_for(int64_t step) const {
  return (fs::path(dir_) / (kTfPrefix + std::to_string(step))).string();
}

namespace {
std::string legacy_path(const std::string& dir, int64_t step) {
  char name[64];
  std::snprintf(name, sizeof name, "%s%012lld%s", kLegacyPrefix, static_cast<long long>(step), kLegacySuffix);
  return (fs::path(dir) / name).string();
}
}  // namespace

std::string CheckpointDir::path_for(int64_t step) const {
  std::error_code ec;
  if (!formats::bundle_exists(prefix_for(step)) && fs::exists(legacy_path(dir_, step), ec)) return legacy_path(dir_, step);
  return prefix_for(step);
}

std::optional<Checkpoint> CheckpointDir::load_latest() const {
  // A directory or a FIFO under a checkpoint's name would fail the save that replaces it,
  // after training: refuse it now, whichever step it names.
  for (const int64_t s : steps()) {
    for (const std::string& file : {prefix_for(s) + kIndexSuffix, formats::bundle_data_file(prefix_for(s)),
                                    legacy_path(dir_, s)}) {
      std::error_code ec;
      const auto st = fs::symlink_status(file, ec);
      if (ec || !fs::exists(st)) continue;
      if (!fs::is_regular_file(fs::status(file, ec)))
        KILN_THROW(CheckpointError) << "[model_dir] '" << file
                                    << "' is not a regular file; names model.ckpt-<step>.* (and ckpt-<step>.kiln) are "
                                       "checkpoints: move it out of the model directory";
    }
  }
  const auto step = latest_step();
  if (!step) return {};
  Checkpoint c = load_checkpoint(path_for(*step));
  if (c.step != *step)
    KILN_THROW(CheckpointError) << "[checkpoint] '" << path_for(*step) << "' holds step " << c.step
                                << ", not the step in its name";
  return c;
}

void CheckpointDir::save(const Checkpoint& ckpt) const {
  write_tf_checkpoint(prefix_for(ckpt.step), ckpt);
  std::error_code ec;
  std::vector<int64_t> all = steps();
  std::vector<int64_t> removed;
  if (keep_ > 0)
    for (size_t i = 0; i + static_cast<size_t>(keep_) < all.size(); ++i) removed.push_back(all[i]);
  for (const int64_t s : removed) {
    // The index first: once it is gone the checkpoint is not one; the rest, if a kill
    // comes first, is removed at the next prepare() (remove_orphans).
    for (const std::string& file : {prefix_for(s) + kIndexSuffix, formats::bundle_data_file(prefix_for(s)),
                                    prefix_for(s) + kStateSuffix, prefix_for(s) + ".meta", legacy_path(dir_, s)})
      if (fs::is_regular_file(fs::symlink_status(file, ec))) fs::remove(file, ec);
  }
  // The state file TensorFlow's latest_checkpoint reads: relative paths, oldest first.
  tensorflow::CheckpointState state;
  state.set_model_checkpoint_path(kTfPrefix + std::to_string(ckpt.step));
  for (const int64_t s : steps())
    if (formats::bundle_exists(prefix_for(s))) state.add_all_model_checkpoint_paths(kTfPrefix + std::to_string(s));
  std::string text;
  google::protobuf::TextFormat::PrintToString(state, &text);
  write_file_atomically((fs::path(dir_) / kStateFile).string(), text, "[checkpoint]");
  // Temporary files of runs that died mid-write (ours were renamed away already). Only under
  // the lock: then no other run that locks is writing here, and a pid that does not exist
  // on this machine is not writing either.
  if (lock_)
    for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
      if (const auto pid = temp_owner(it->path().filename().string()); pid && !process_exists(*pid))
        fs::remove(it->path(), ec);
}

std::optional<std::string> latest_checkpoint_path(const std::string& dir) {
  std::error_code ec;
  const std::string state_path = (fs::path(dir) / kStateFile).string();
  if (fs::is_regular_file(state_path, ec)) {
    tensorflow::CheckpointState state;
    if (google::protobuf::TextFormat::ParseFromString(read_small_file(state_path, 1 << 20), &state) &&
        !state.model_checkpoint_path().empty()) {
      const fs::path p(state.model_checkpoint_path());
      const std::string prefix = p.is_absolute() ? p.string() : (fs::path(dir) / p).string();
      if (formats::bundle_exists(prefix)) return prefix;
    }
  }
  const auto step = CheckpointDir(dir, 0).latest_step();
  if (!step) return std::nullopt;
  return CheckpointDir(dir, 0).path_for(*step);
}

}  // namespace kiln
