// TensorBoard's event files, as TensorFlow's FileWriter writes them: a new file
// "events.out.tfevents.<10-digit Unix second>.<host>" per writer (named to sort after every
// event file already in the directory, since TensorBoard reads them in name order), TFRecord
// framing (formats/tfrecord.h), the Event protos of formats/proto/tf_event.proto. The first
// event is the file_version "brain.Event:2", which tells TensorBoard to drop, at each
// SessionLog START, the events at and after its step: what a resumed run writes so that the
// steps after its checkpoint are not drawn twice. A killed writer leaves a readable file
// (TensorBoard stops at a torn last record).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/tfrecord.h"

namespace tensorflow {
class Summary;
}

namespace kiln {

class EventFile {
 public:
  // Creates `dir` if needed and the new file in it, and writes the file_version event.
  // SystemError naming the file when it cannot be created.
  explicit EventFile(const std::string& dir);
  void scalars(int64_t step, double wall_time, const std::vector<std::pair<std::string, float>>& values);
  void session_start(int64_t step, double wall_time);
  // Any Summary (histograms, images); nothing when it holds no value.
  void summary(int64_t step, double wall_time, const tensorflow::Summary& values);
  // A serialized Summary (what a Session's run of a summary op gives); ConfigError when
  // the bytes are not one.
  void summary_bytes(int64_t step, double wall_time, const std::string& serialized);
  // A serialized GraphDef (train/summary/graph_def.h), for TensorBoard's graph tab.
  void graph_def(double wall_time, const std::string& serialized);
  // SessionLog CHECKPOINT, as Estimator writes at each save (`prefix` without "-<step>").
  void checkpoint_saved(int64_t step, double wall_time, const std::string& prefix);
  void flush(bool sync = false);
  const std::string& path() const { return writer_->path(); }

 private:
  void write(const std::string& event_bytes);
  std::unique_ptr<formats::RecordWriter> writer_;
};

// The name of a new event file in `dir` at Unix second `now`: "events.out.tfevents.<t>.<host>"
// with t = now, or one more than the latest t of an event file already there.
std::string new_event_file_name(const std::string& dir, int64_t now, const std::string& host);

}  // namespace kiln
