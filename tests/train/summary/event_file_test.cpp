// TensorBoard event files: the records TensorFlow's FileWriter writes (file_version first,
// SessionLog START, scalars as simple_value), names that sort after the files already
// there, and the events a SummaryWriter mirrors from its records. The real TensorBoard
// reads them in tests/python/test_tensorboard.py.
#include "train/summary/event_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "formats/tfrecord.h"
#include "kiln/train/summary.h"
#include "support/temp_files.h"
#include "tf_event.pb.h"

namespace kiln {
namespace {
namespace fs = std::filesystem;

std::vector<tensorflow::Event> read_events(const std::string& path) {
  formats::RecordReader r(path, formats::Compression::none);
  std::vector<tensorflow::Event> out;
  std::string rec;
  while (r.next(rec)) {
    tensorflow::Event e;
    EXPECT_TRUE(e.ParseFromString(rec)) << path;
    out.push_back(e);
  }
  return out;
}

std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(EventFile, WritesWhatTensorFlowsFileWriterWrites) {
  const fs::path d = testkit::fresh_dir("events-basic");
  fs::create_directories(d);
  std::string path;
  {
    EventFile f(d.string());
    path = f.path();
    f.session_start(1, 100.5);
    f.scalars(2, 101.0, {{"loss", 0.5f}, {"global_step/sec", 12.0f}});
    f.scalars(3, 101.5, {});  // nothing to write: no event
    f.checkpoint_saved(4, 102.0, (d / "model.ckpt").string());
    f.flush(true);
  }
  const auto ev = read_events(path);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].file_version(), "brain.Event:2");
  EXPECT_GT(ev[0].wall_time(), 1.7e9);
  EXPECT_EQ(ev[1].session_log().status(), tensorflow::SessionLog::START);
  EXPECT_EQ(ev[1].step(), 1);
  ASSERT_EQ(ev[2].summary().value_size(), 2);
  EXPECT_EQ(ev[2].summary().value(0).tag(), "loss");
  EXPECT_EQ(ev[2].summary().value(0).simple_value(), 0.5f);
  EXPECT_EQ(ev[2].step(), 2);
  EXPECT_EQ(ev[2].wall_time(), 101.0);
  EXPECT_EQ(ev[3].session_log().status(), tensorflow::SessionLog::CHECKPOINT);
  EXPECT_EQ(fs::path(path).filename().string().substr(0, 20), "events.out.tfevents.");
  fs::remove_all(d);
}

TEST(EventFile, ANewFileSortsAfterThoseThere) {
  const fs::path d = testkit::fresh_dir("events-names");
  fs::create_directories(d);
  EXPECT_EQ(new_event_file_name(d.string(), 1700000000, "h"), "events.out.tfevents.1700000000.h");
  std::ofstream(d / "events.out.tfevents.1800000000.other") << "";
  std::ofstream(d / "events.out.tfevents.junk") << "";
  EXPECT_EQ(new_event_file_name(d.string(), 1700000000, "h"), "events.out.tfevents.1800000001.h");
  // two writers in one second: the second file is another one, the first is not truncated
  fs::remove(d / "events.out.tfevents.1800000000.other");
  fs::remove(d / "events.out.tfevents.junk");
  std::string first, second;
  {
    EventFile a(d.string());
    a.scalars(1, 1.0, {{"x", 1.f}});
    first = a.path();
  }
  {
    EventFile b(d.string());
    second = b.path();
  }
  EXPECT_NE(first, second);
  EXPECT_LT(first, second);
  EXPECT_EQ(read_events(first).size(), 2u);
  fs::remove_all(d);
}

TEST(EventFile, ATornLastEventLeavesTheOthersReadable) {
  const fs::path d = testkit::fresh_dir("events-torn");
  fs::create_directories(d);
  std::string path;
  {
    EventFile f(d.string());
    path = f.path();
    f.scalars(1, 1.0, {{"loss", 1.f}});
    f.scalars(2, 2.0, {{"loss", 2.f}});
  }
  const std::string bytes = testkit::read_file(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 7);
  formats::RecordReader r(path, formats::Compression::none);
  std::string rec;
  ASSERT_TRUE(r.next(rec));
  ASSERT_TRUE(r.next(rec));
  EXPECT_THROW(r.next(rec), DataError);  // the torn one is named; TensorBoard stops before it
  fs::remove_all(d);
}

TEST(SummaryEvents, MirrorsTheRecordsOfATrainingRun) {
  const fs::path d = testkit::fresh_dir("events-mirror");
  fs::create_directories(d);
  {
    SummaryWriter w((d / "summaries.jsonl").string(), d.string());
    w.write({{"event", "start"}, {"step", 10}, {"config", {{"accelerate_train_mode", "fast|step|0.5"}}}});
    w.write({{"event", "progress"}, {"step", 12}, {"loss", 0.25}, {"steps_per_second", 40.0}, {"phase", "mixed_float16"},
             {"learning_rate", 0.1}, {"loss_scale", 32768.0}, {"scalars", {{"mine", 3.0}}}});
    w.write({{"event", "precision_switch"}, {"step", 13}, {"reason", "step"}});
    w.write({{"event", "progress"}, {"step", 14}, {"loss", nullptr}, {"steps_per_second", 41.0}, {"phase", "original"}});
    w.write({{"event", "end"}, {"step", 14}, {"accelerate", {{"skipped_updates", 2}}}});
    w.sync();
  }
  const auto files = event_files(d);
  ASSERT_EQ(files.size(), 1u);
  const auto ev = read_events(files[0]);
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[1].session_log().status(), tensorflow::SessionLog::START);
  EXPECT_EQ(ev[1].step(), 11);  // the first step the call logs after resuming at 10
  std::map<std::string, float> at12;
  for (const auto& v : ev[2].summary().value()) at12[v.tag()] = v.simple_value();
  EXPECT_EQ(at12, (std::map<std::string, float>{{"loss", 0.25f}, {"global_step/sec", 40.f}, {"learning_rate", 0.1f},
                                                 {"kiln/loss_scale", 32768.f}, {"kiln/low_precision", 1.f}, {"mine", 3.f}}));
  EXPECT_EQ(ev[3].summary().value(0).tag(), "kiln/precision_switch_step");
  EXPECT_EQ(ev[3].summary().value(0).simple_value(), 13.f);
  std::map<std::string, float> at14;
  for (const auto& v : ev[4].summary().value()) at14[v.tag()] = v.simple_value();
  EXPECT_EQ(at14, (std::map<std::string, float>{{"global_step/sec", 41.f}, {"kiln/low_precision", 0.f}}));  // no null loss
  EXPECT_EQ(ev[5].summary().value(0).tag(), "kiln/skipped_updates");
  fs::remove_all(d);
}

TEST(SummaryEvents, AWriterThatWritesNothingLeavesNoFile) {
  const fs::path d = testkit::fresh_dir("events-none");
  fs::create_directories(d);
  { SummaryWriter w((d / "summaries.jsonl").string(), (d / "eval").string()); }
  EXPECT_FALSE(fs::exists(d / "eval"));
  fs::remove_all(d);
}

}  // namespace
}  // namespace kiln
