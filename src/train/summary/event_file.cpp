#include "train/summary/event_file.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "kiln/base/error.h"
#include "tf_event.pb.h"

namespace fs = std::filesystem;

namespace kiln {
namespace {
constexpr const char* kStem = "events.out.tfevents.";

std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0 || !h[0]) return "localhost";
  return h;
}
}  // namespace

std::string new_event_file_name(const std::string& dir, int64_t now, const std::string& host) {
  int64_t t = now;
  std::error_code ec;
  const std::string stem = kStem;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(stem, 0) != 0) continue;
    size_t i = stem.size(), j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    if (j == i || j - i > 18) continue;
    t = std::max<int64_t>(t, std::stoll(name.substr(i, j - i)) + 1);
  }
  char digits[32];
  std::snprintf(digits, sizeof digits, "%010lld", static_cast<long long>(t));
  return stem + digits + "." + host;
}

EventFile::EventFile(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) KILN_THROW(SystemError) << "[summaries] cannot create '" << dir << "': " << ec.message();
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string path = (fs::path(dir) / new_event_file_name(dir, now, host_name())).string();
  writer_ = std::make_unique<formats::RecordWriter>(path, formats::Compression::none);
  tensorflow::Event e;
  e.set_wall_time(static_cast<double>(now));
  e.set_file_version("brain.Event:2");
  e.mutable_source_metadata()->set_writer("kiln " KILN_VERSION);
  write(e.SerializeAsString());
  flush();
}

void EventFile::write(const std::string& event_bytes) { writer_->write(event_bytes); }

void EventFile::scalars(int64_t step, double wall_time, const std::vector<std::pair<std::string, float>>& values) {
  if (values.empty()) return;
  tensorflow::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  for (const auto& [tag, v] : values) {
    tensorflow::Summary::Value* s = e.mutable_summary()->add_value();
    s->set_tag(tag);
    s->set_simple_value(v);
  }
  write(e.SerializeAsString());
}

void EventFile::summary(int64_t step, double wall_time, const tensorflow::Summary& values) {
  if (values.value_size() == 0) return;
  tensorflow::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  *e.mutable_summary() = values;
  write(e.SerializeAsString());
}

void EventFile::summary_bytes(int64_t step, double wall_time, const std::string& serialized) {
  tensorflow::Summary values;
  if (!values.ParseFromString(serialized))
    KILN_THROW(ConfigError) << "[FileWriter.add_summary] the " << serialized.size()
                            << " bytes are not a serialized Summary (give what sess.run of a summary op returns, "
                               "or a kiln.summary.Summary)";
  summary(step, wall_time, values);
}

void EventFile::graph_def(double wall_time, const std::string& serialized) {
  tensorflow::Event e;
  e.set_wall_time(wall_time);
  e.set_graph_def(serialized);
  write(e.SerializeAsString());
}

void EventFile::session_start(int64_t step, double wall_time) {
  tensorflow::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  e.mutable_session_log()->set_status(tensorflow::SessionLog::START);
  write(e.SerializeAsString());
}

void EventFile::checkpoint_saved(int64_t step, double wall_time, const std::string& prefix) {
  tensorflow::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  e.mutable_session_log()->set_status(tensorflow::SessionLog::CHECKPOINT);
  e.mutable_session_log()->set_checkpoint_path(prefix);
  write(e.SerializeAsString());
}

void EventFile::flush(bool sync) { writer_->flush(sync); }

}  // namespace kiln
