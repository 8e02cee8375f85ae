// The summary file: records appended and read back, a record torn by a kill skipped (never
// fatal), a write that fails reported, and what the Estimator writes into it.
#include "kiln/train/summary.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "kiln/models/models.h"
#include "kiln/process/process.h"
#include "support/temp_files.h"
#include "support/train_inputs.h"

namespace kiln {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name) : path(testkit::fresh_dir("summary-" + name)) { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string file() const { return (path / kSummaryFileName).string(); }
};

void append_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::app | std::ios::binary) << bytes;
}

std::vector<std::string> events(const RecordFile& f) {
  std::vector<std::string> out;
  for (const auto& r : f.records) out.push_back(r["event"]);
  return out;
}

TEST(SummaryFile, WriterAppendsRecordsTheReaderReadsBack) {
  Dir d("append");
  EXPECT_EQ(summary_path(d.path.string()), d.file());
  {
    SummaryWriter w(d.file());
    w.write({{"event", "progress"}, {"step", 10}, {"loss", 0.5}});
    w.write({{"event", "eval"}, {"step", 10}, {"metrics", {{"accuracy", 0.75}}}, {"wall_time", 7.0}});
    w.sync();
  }
  {
    SummaryWriter again(d.file());  // a resumed run continues the file
    again.write({{"event", "progress"}, {"step", 20}, {"loss", 0.25}});
  }
  const RecordFile f = read_records(d.file());
  EXPECT_EQ(events(f), (std::vector<std::string>{"progress", "eval", "progress"}));
  EXPECT_TRUE(f.skipped.empty());
  EXPECT_EQ(f.records[0]["loss"], 0.5);
  EXPECT_TRUE(f.records[0]["wall_time"].is_number()) << "the writer stamps the wall time";
  EXPECT_EQ(f.records[1]["wall_time"], 7.0) << "a record's own wall time is kept";
  EXPECT_EQ(f.records[2]["step"], 20);
}

TEST(SummaryFile, ATornLastRecordIsSkippedAndTheNextWriterStartsANewLine) {
  Dir d("torn");
  {
    SummaryWriter w(d.file());
    w.write({{"event", "progress"}, {"step", 1}, {"loss", 1.0}});
    w.write({{"event", "progress"}, {"step", 2}, {"loss", 0.9}});
  }
  append_raw(d.file(), R"({"event":"progress","step":3,"lo)");  // killed mid-write
  RecordFile f = read_records(d.file());
  ASSERT_EQ(f.records.size(), 2u);
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_EQ(f.skipped[0], "line 3: torn last record (no end of line)");
  // Even a torn line that happens to be whole JSON is not trusted without its newline.
  Dir d2("torn-json");
  append_raw(d2.file(), "{\"event\":\"progress\",\"step\":1,\"loss\":1}\n{\"event\":\"progress\",\"step\":2}");
  EXPECT_EQ(read_records(d2.file()).records.size(), 1u);

  {
    SummaryWriter w(d.file());  // the resumed run
    w.write({{"event", "progress"}, {"step", 3}, {"loss", 0.8}});
  }
  f = read_records(d.file());
  EXPECT_EQ(f.records.size(), 3u) << "the new record is not glued to the torn one";
  EXPECT_EQ(f.records.back()["step"], 3);
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_NE(f.skipped[0].find("line 3: not JSON"), std::string::npos) << f.skipped[0];
}

TEST(SummaryFile, LinesThatAreNotKilnRecordsAreSkippedWithTheirLineNumber) {
  Dir d("garbage");
  append_raw(d.file(), "hello\n[1,2]\n\n{\"step\":1}\n{\"event\":\"progress\",\"step\":5,\"loss\":1}\n");
  const RecordFile f = read_records(d.file());
  ASSERT_EQ(f.records.size(), 1u);
  ASSERT_EQ(f.skipped.size(), 3u);
  EXPECT_EQ(f.skipped[0].rfind("line 1: not JSON (hello)", 0), 0u) << f.skipped[0];
  EXPECT_EQ(f.skipped[1], "line 2: a JSON value that is not a kiln record (no \"event\")");
  EXPECT_EQ(f.skipped[2].rfind("line 4:", 0), 0u);
  EXPECT_EQ(f.lines, 5);
}

TEST(SummaryFile, UnreadableInputsAreDataErrorsNamingThePath) {
  Dir d("unreadable");
  const std::string missing = (d.path / "nope.jsonl").string();
  try {
    read_records(missing);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + missing + "'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_records(d.path.string()), DataError);  // a directory
}

TEST(SummaryFile, AWriteThatFailsIsAnErrorNotASilentLoss) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  SummaryWriter w("/dev/full");
  try {
    w.write({{"event", "progress"}, {"step", 1}});
    FAIL() << "a lost record went unnoticed";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("[summaries] cannot write to '/dev/full'"), std::string::npos) << e.what();
  }
  Dir d("noentry");
  EXPECT_THROW(SummaryWriter((d.path / "no" / "such" / "dir.jsonl").string()), SystemError);
}

// A hook's own scalar, every step.
class ScalarHook : public Hook {
 public:
  void after_run(RunContext& ctx, const RunValues& v) override { ctx.add_scalar("twice_loss", 2 * v.loss()); }
};

Estimator small_estimator(const std::string& dir, int64_t every) {
  RunConfig cfg;
  cfg.model_dir = dir;
  cfg.save_summary_steps = every;
  return Estimator(classifier_model_fn(mlp_model({16}, 2, 7)), cfg,
                   Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}}, testkit::interp());
}

TEST(Summaries, TheEstimatorRecordsStartProgressScalarsEndAndEvaluations) {
  Dir d("estimator");
  const auto ds = testkit::blobs(128, 3);
  Estimator est = small_estimator(d.path.string(), 4);
  est.train(testkit::training_input(ds, 16), 10, {std::make_shared<ScalarHook>()});
  const Evaluation ev = est.evaluate(testkit::eval_input(ds, 32));
  const RecordFile f = read_records(d.file());
  std::vector<std::string> expected{"start"};
  // progress at 4 and 8 and the last step (10); the steps in between carry the scalar alone
  for (int step = 1; step <= 10; ++step) expected.push_back(step % 4 == 0 || step == 10 ? "progress" : "scalars");
  expected.push_back("end");
  expected.push_back("eval");
  EXPECT_EQ(events(f), expected);
  const json& start = f.records[0];
  EXPECT_EQ(start["step"], 0);
  EXPECT_EQ(start["max_steps"], 10);
  EXPECT_EQ(start["kiln_version"], KILN_VERSION);
  EXPECT_EQ(start["openmp_wait"], openmp_wait_setting());  // this process's: the test's environment
  EXPECT_EQ(start["params"]["optimizer"], "sgd");
  const json& p = f.records[4];
  EXPECT_EQ(p["step"], 4);
  EXPECT_EQ(p["phase"], "original");
  EXPECT_EQ(p["learning_rate"], 0.1);
  EXPECT_GT(p["steps_per_second"].get<double>(), 0);
  EXPECT_TRUE(p["loss"].is_number());
  EXPECT_TRUE(p["scalars"]["twice_loss"].is_number());
  EXPECT_EQ(f.records[1]["scalars"].size(), 1u);
  const json& end = f.records[11];
  EXPECT_EQ(end["steps"], 10);
  EXPECT_EQ(end["steps_this_run"], 10);
  const json& eval = f.records[12];
  EXPECT_EQ(eval["step"], 10);
  EXPECT_DOUBLE_EQ(eval["metrics"]["accuracy"].get<double>(), ev.metrics.at("accuracy"));

  // A resumed run continues the same file, starting where the checkpoint was.
  Estimator resumed = small_estimator(d.path.string(), 4);
  resumed.train(testkit::training_input(ds, 16), 12);
  const RecordFile g = read_records(d.file());
  EXPECT_EQ(g.records.size(), f.records.size() + 3);  // start, progress at 12, end
  EXPECT_EQ(g.records[f.records.size()]["event"], "start");
  EXPECT_EQ(g.records[f.records.size()]["step"], 10);
  EXPECT_EQ(g.records[f.records.size()]["resumed"], true);
}

TEST(Summaries, AnAcceleratedRunRecordsTheSwitchItsPhasesAndTheLossScale) {
  Dir d("accelerated");
  RunConfig cfg;
  cfg.model_dir = d.path.string();
  cfg.save_summary_steps = 2;
  cfg.experimental_config.accelerate_train_mode = "fast|step|0.5";
  Estimator est(classifier_model_fn(mlp_model({16}, 2, 7)), cfg, Params{{"optimizer", "sgd"}, {"learning_rate", 0.1}},
                testkit::interp());
  est.train(testkit::training_input(testkit::blobs(128, 3), 16), 10,
            {std::make_shared<TellMeStepOrLossHook>("global_step", 10)});
  std::map<int64_t, json> progress;
  std::vector<json> switches;
  json end;
  for (const json& r : read_records(d.file()).records) {
    if (r["event"] == "progress") progress[r["step"].get<int64_t>()] = r;
    if (r["event"] == "precision_switch") switches.push_back(r);
    if (r["event"] == "end") end = r;
  }
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0]["step"], 5);
  EXPECT_EQ(switches[0]["requested_step"], 5);
  EXPECT_EQ(switches[0]["reason"], "step");
  EXPECT_EQ(switches[0]["from"], "mixed_float16");
  ASSERT_EQ(progress.size(), 5u);
  EXPECT_EQ(progress[4]["phase"], "mixed_float16");
  EXPECT_EQ(progress[4]["loss_scale"], 65536.0);
  EXPECT_EQ(progress[6]["phase"], "original");
  EXPECT_FALSE(progress[6].contains("loss_scale"));
  EXPECT_EQ(end["accelerate"]["switch_step"], 5);
  EXPECT_EQ(end["accelerate"]["mode"], "fast|step|0.5");
}

TEST(Summaries, OffWithoutModelDirOrWithZeroSteps) {
  Dir d("off");
  const auto ds = testkit::blobs(64, 3);
  small_estimator(d.path.string(), 0).train(testkit::training_input(ds, 16), 3);
  EXPECT_FALSE(fs::exists(d.file()));
  EXPECT_TRUE(CheckpointDir(d.path.string(), 0).latest_step() == 3) << "checkpoints are still written";
}

}  // namespace
}  // namespace kiln
