// The summary file: append-only JSON Lines, one write(2) per record (see kiln/summary.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kiln/error.h"
#include "kiln/summary.h"

namespace kiln {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Whether the file's last byte is something other than a newline (a record torn by a kill).
bool ends_torn(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return false;
  char last = '\n';
  return ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

}  // namespace

std::string summary_path(const std::string& model_dir) {
  return (std::filesystem::path(model_dir) / kSummaryFileName).string();
}

SummaryWriter::SummaryWriter(std::string path) : path_(std::move(path)) {
  // Read as well as append: the last byte says whether a kill tore the last record.
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) KILN_THROW(SystemError) << "[summaries] cannot open '" << path_ << "' for appending: " << std::strerror(errno);
  if (ends_torn(fd_)) write_all("\n");
}

SummaryWriter::~SummaryWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SummaryWriter::write_all(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      KILN_THROW(SystemError) << "[summaries] cannot write to '" << path_ << "': "
                              << (n < 0 ? std::strerror(errno) : "nothing was written")
                              << "; the summary record of this step is lost";
    done += static_cast<size_t>(n);
  }
}

void SummaryWriter::write(nlohmann::json record) {
  if (!record.contains("wall_time")) record["wall_time"] = unix_seconds();
  write_all(record.dump() + "\n");
}

void SummaryWriter::sync() {
  if (::fsync(fd_) != 0)
    KILN_THROW(SystemError) << "[summaries] cannot sync '" << path_ << "': " << std::strerror(errno);
}

RecordFile read_records(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    KILN_THROW(DataError) << "[summaries] cannot read '" << path << "': it is a directory";
  std::ifstream in(path, std::ios::binary);
  if (!in) KILN_THROW(DataError) << "[summaries] cannot read '" << path << "': " << std::strerror(errno);
  RecordFile f;
  std::string line;
  while (std::getline(in, line)) {
    ++f.lines;
    const std::string where = "line " + std::to_string(f.lines) + ": ";
    if (in.eof()) {  // no newline after it: the write was cut short
      f.skipped.push_back(where + "torn last record (no end of line)");
      break;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      f.skipped.push_back(where + "not JSON (" + line.substr(0, 40) + (line.size() > 40 ? "...)" : ")"));
    } else if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) {
      f.skipped.push_back(where + "a JSON value that is not a kiln record (no \"event\")");
    } else {
      f.records.push_back(std::move(j));
    }
  }
  if (in.bad()) KILN_THROW(DataError) << "[summaries] cannot read '" << path << "': " << std::strerror(errno);
  return f;
}

}  // namespace kiln
