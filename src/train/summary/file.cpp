// The summary file: append-only JSON Lines, one write(2) per record (see kiln/train/summary.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "formats/bounded_json.h"
#include "kiln/base/error.h"
#include "kiln/train/summary.h"
#include "train/summary/events.h"

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

SummaryWriter::SummaryWriter(std::string path, const std::string& events_dir) : path_(std::move(path)) {
  if (!events_dir.empty()) events_ = std::make_unique<SummaryEvents>(events_dir);
  // Read as well as append: the last byte says whether a kill tore the last record.
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) KILN_THROW(SystemError) << "[summaries] cannot open '" << path_ << "' for appending: " << std::strerror(errno);
  if (ends_torn(fd_)) write_all("\n");
}

SummaryWriter::~SummaryWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (events_) {
    try {
      events_->flush(false);
    } catch (const Error&) {
      // a destructor does not throw; sync() reported a failing disk already
    }
  }
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
  if (events_) events_->on_record(record);
}

void SummaryWriter::sync() {
  if (events_) events_->flush(true);
  if (::fsync(fd_) != 0)
    KILN_THROW(SystemError) << "[summaries] cannot sync '" << path_ << "': " << std::strerror(errno);
}

namespace {

enum Kind : unsigned { kNumber = 1, kString = 2, kObject = 4, kBool = 8, kNull = 16 };

struct FieldRule {
  const char* event;  // "*": every record
  const char* pointer;  // a JSON pointer into the record
  unsigned kinds;
};

// The fields kiln's readers (the report, resumes) take a value of a given type from. A
// record that has one of them with another type is skipped, naming the field: a hand-edited
// "phase": 7 costs that record, not the report.
constexpr FieldRule kRules[] = {
    {"*", "/step", kNumber | kNull},
    {"*", "/wall_time", kNumber | kNull},
    {"start", "/kiln_version", kString},
    {"start", "/cpu", kString},
    {"start", "/isa", kString},
    {"start", "/backend", kString},
    {"start", "/max_steps", kNumber},
    {"start", "/config", kObject},
    {"start", "/config/accelerate_train_mode", kString | kNull},
    {"start", "/params", kObject},
    {"progress", "/loss", kNumber | kNull},
    {"progress", "/steps_per_second", kNumber | kNull},
    {"progress", "/elapsed_seconds", kNumber | kNull},
    {"progress", "/phase", kString},
    {"progress", "/learning_rate", kNumber | kNull},
    {"progress", "/loss_scale", kNumber | kNull},
    {"progress", "/scalars", kObject},
    {"progress", "/histograms", kObject},
    {"progress", "/images", kObject},
    {"scalars", "/scalars", kObject},
    {"scalars", "/histograms", kObject},
    {"scalars", "/images", kObject},
    {"precision_switch", "/requested_step", kNumber},
    {"precision_switch", "/reason", kString},
    {"precision_switch", "/from", kString},
    {"eval", "/metrics", kObject},
    {"eval", "/seconds", kNumber | kNull},
    {"eval", "/compile_seconds", kNumber | kNull},
    {"end", "/train_seconds", kNumber | kNull},
    {"end", "/compile_seconds", kNumber | kNull},
    {"end", "/accelerate", kObject | kNull},
    {"final", "/train_seconds", kNumber | kNull},
    {"final", "/compile_seconds", kNumber | kNull},
    {"final", "/steps", kNumber | kNull},
    {"final", "/accelerate", kObject | kNull},
};
constexpr FieldRule kAccelerateRules[] = {
    {"", "/mode", kString},
    {"", "/low_phase", kString},
    {"", "/switch_step", kNumber | kNull},
    {"", "/requested_switch_step", kNumber | kNull},
    {"", "/switch_reason", kString | kNull},
};

unsigned kind_of(const nlohmann::json& v) {
  if (v.is_number()) return kNumber;
  if (v.is_string()) return kString;
  if (v.is_object()) return kObject;
  if (v.is_boolean()) return kBool;
  if (v.is_null()) return kNull;
  return 0;  // an array
}

std::string kinds_text(unsigned kinds) {
  std::string out;
  for (auto [k, name] : {std::pair{kNumber, "a number"}, {kString, "a string"}, {kObject, "an object"},
                         {kBool, "true or false"}, {kNull, "null"}})
    if (kinds & k) out += (out.empty() ? "" : " or ") + std::string(name);
  return out;
}

std::string check_fields(const nlohmann::json& r, const std::string& event, const FieldRule* begin,
                         const FieldRule* end, const std::string& prefix) {
  for (const FieldRule* rule = begin; rule != end; ++rule) {
    if (*rule->event && std::string(rule->event) != "*" && event != rule->event) continue;
    const nlohmann::json::json_pointer ptr(rule->pointer);
    if (!r.contains(ptr)) continue;
    const nlohmann::json& v = r.at(ptr);
    if (kind_of(v) & rule->kinds) continue;
    std::string shown = v.dump();
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    return "field \"" + prefix + std::string(rule->pointer + 1) + "\" of a \"" + event + "\" record is " + shown +
           "; expected " + kinds_text(rule->kinds);
  }
  return {};
}

}  // namespace

std::string record_problem(const nlohmann::json& r) {
  if (!r.is_object() || !r.contains("event") || !r["event"].is_string())
    return "a JSON value that is not a kiln record (no \"event\")";
  const std::string event = r["event"].get<std::string>();
  std::string why = check_fields(r, event, std::begin(kRules), std::end(kRules), "");
  if (why.empty() && r.contains("accelerate") && r["accelerate"].is_object())
    why = check_fields(r["accelerate"], event, std::begin(kAccelerateRules), std::end(kAccelerateRules), "accelerate.");
  return why;
}

RecordFile parse_records(std::istream& in, size_t max_line_bytes) {
  RecordFile f;
  std::string line;
  for (;;) {
    // A line of at most max_line_bytes is kept; the rest of a longer one is read past.
    line.clear();
    bool too_long = false, newline = false;
    for (int c; (c = in.get()) != std::char_traits<char>::eof();) {
      if (c == '\n') {
        newline = true;
        break;
      }
      if (line.size() < max_line_bytes) line.push_back(static_cast<char>(c));
      else too_long = true;
    }
    if (!newline && line.empty() && !too_long) break;  // the end
    ++f.lines;
    const std::string where = "line " + std::to_string(f.lines) + ": ";
    if (!newline) {  // no newline after it: the write was cut short
      f.skipped.push_back(where + "torn last record (no end of line)");
      break;
    }
    if (too_long) {
      f.skipped.push_back(where + "longer than the " + std::to_string(max_line_bytes) + " bytes a record may have");
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string why;
    nlohmann::json j = parse_bounded_json(line, JsonLimits{max_line_bytes, 64}, &why);
    if (j.is_discarded()) {
      f.skipped.push_back(where + why + " (" + line.substr(0, 40) + (line.size() > 40 ? "...)" : ")"));
    } else if (const std::string problem = record_problem(j); !problem.empty()) {
      f.skipped.push_back(where + problem);
    } else {
      f.records.push_back(std::move(j));
      f.record_lines.push_back(f.lines);
    }
  }
  return f;
}

RecordFile read_records(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    KILN_THROW(DataError) << "[summaries] cannot read '" << path << "': it is a directory";
  std::ifstream in(path, std::ios::binary);
  if (!in) KILN_THROW(DataError) << "[summaries] cannot read '" << path << "': " << std::strerror(errno);
  RecordFile f = parse_records(in);
  if (in.bad()) KILN_THROW(DataError) << "[summaries] cannot read '" << path << "': " << std::strerror(errno);
  return f;
}

}  // namespace kiln
