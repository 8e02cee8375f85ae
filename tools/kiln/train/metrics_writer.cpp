#include "metrics_writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "kiln/base/error.h"

namespace kiln::cli {

MetricsWriter::MetricsWriter(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  const auto parent = std::filesystem::path(path_).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  // errno is taken at once: the next call (the directory test) may change it.
  const int err = ::access(dir.c_str(), W_OK) != 0 ? errno : 0;
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(path_, ec);
  if (err || is_dir)
    KILN_THROW(ConfigError) << "[metrics_out] cannot write '" << path_ << "': "
                            << (is_dir ? "it is a directory" : std::strerror(err));
}

void MetricsWriter::write(nlohmann::json record) {
  if (!record.contains("wall_time"))  // the command's own records; the Estimator's have theirs
    record["wall_time"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (keep_) kept_.push_back(record);
  if (path_.empty()) return;
  if (!out_.is_open()) {
    errno = 0;
    out_.open(path_, std::ios::trunc);
    if (const int err = errno; !out_)
      KILN_THROW(SystemError) << "[metrics_out] cannot open '" << path_ << "' for writing: "
                              << (err ? std::strerror(err) : "the open failed");
  }
  errno = 0;
  out_ << record.dump() << "\n";
  out_.flush();
  // A record lost to a full disk fails the run: nothing kiln reports may vanish silently.
  if (const int err = errno; !out_)
    KILN_THROW(SystemError) << "[metrics_out] cannot write to '" << path_ << "': "
                            << (err ? std::strerror(err) : "the write failed");
}

}  // namespace kiln::cli
