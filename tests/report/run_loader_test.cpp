// Records -> Run, and the page made of runs: what is drawn, what is skipped and said.
#include "kiln/report/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "kiln/base/error.h"
#include "kiln/train/summary.h"
#include "support/temp_files.h"

namespace kiln::report {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// What `kiln train --accelerate-train-mode 'fast1|step|0.5' --metrics-out` writes, in short.
std::vector<json> metrics_out_records() {
  return {
      {{"event", "progress"}, {"step", 2}, {"loss", 2.0}, {"steps_per_second", 10.0}, {"phase", "mixed_bfloat16"}},
      {{"event", "progress"}, {"step", 4}, {"loss", 1.5}, {"steps_per_second", 20.0}, {"phase", "mixed_bfloat16"}},
      {{"event", "precision_switch"}, {"step", 5}, {"requested_step", 5}, {"reason", "step"}, {"from", "mixed_bfloat16"}},
      {{"event", "eval"}, {"step", 5}, {"test_loss", 1.2}, {"test_accuracy", 0.6}},
      {{"event", "progress"}, {"step", 6}, {"loss", 1.0}, {"steps_per_second", 10.0}, {"phase", "original"}},
      {{"event", "progress"}, {"step", 10}, {"loss", 0.5}, {"steps_per_second", 8.0}, {"phase", "original"}},
      {{"event", "final"}, {"steps", 10}, {"train_seconds", 1.0}, {"compile_seconds", 2.0}, {"eval_seconds", 0.5},
       {"final_loss", 0.45}, {"test_loss", 0.6}, {"test_accuracy", 0.8}, {"model", "mlp"},
       {"accelerate", {{"mode", "fast1|step|0.5"}, {"switch_step", 5}, {"seconds_saved", 0.3}}}},
  };
}

TEST(RunFromRecords, DrawsLossRatesEvaluationsAndTheSwitch) {
  const report::Run r = run_from_records(metrics_out_records(), "fast1", "m.jsonl");
  ASSERT_EQ(r.loss.size(), 4u);
  EXPECT_EQ(r.loss[1].x, 4);
  EXPECT_EQ(r.loss[1].y, 1.5);
  ASSERT_TRUE(r.precision_switch);
  EXPECT_EQ(r.precision_switch->step, 5);
  EXPECT_EQ(r.precision_switch->reason, "step");
  EXPECT_EQ(r.precision_switch->describe(), "5 (requested 5, step)");
  EXPECT_EQ((PrecisionSwitchMark{23, 38, "loss", true}.describe()), "23 (loss; cap 38)");
  EXPECT_EQ(r.low_phase, "mixed_bfloat16");
  ASSERT_TRUE(r.low_steps);
  EXPECT_EQ(r.low_steps->second, 5);
  // Training seconds: 2 steps at 10/s, 2 at 20/s, 2 at 10/s, 4 at 8/s.
  ASSERT_EQ(r.rate.size(), 4u);
  EXPECT_DOUBLE_EQ(r.rate[0].x, 0.2);
  EXPECT_DOUBLE_EQ(r.rate[1].x, 0.3);
  EXPECT_DOUBLE_EQ(r.rate[3].x, 1.0);
  EXPECT_EQ(r.rate_low, (std::vector<bool>{true, true, false, false}));
  ASSERT_TRUE(r.low_seconds);
  EXPECT_DOUBLE_EQ(r.low_seconds->second, 0.3);
  // Evaluations: the eval record, then the final record's test set result.
  ASSERT_EQ(r.eval.at("accuracy").size(), 2u);
  EXPECT_EQ(r.eval.at("accuracy")[1].x, 10);
  EXPECT_EQ(r.eval.at("accuracy")[1].y, 0.8);
  EXPECT_EQ(r.facts["test_accuracy"], 0.8);
  EXPECT_EQ(r.facts["accelerate_train_mode"], "fast1|step|0.5");
  EXPECT_EQ(r.facts["train_seconds"], 1.0);
}

TEST(RunFromRecords, AResumedRunReplacesWhatTheKilledRunDidAfterItsCheckpoint) {
  const std::vector<json> records = {
      {{"event", "start"}, {"step", 0}, {"kiln_version", "0.1.0"}, {"params", {{"model", "cnn"}}}},
      {{"event", "progress"}, {"step", 2}, {"loss", 2.0}, {"steps_per_second", 10.0}, {"phase", "original"}},
      {{"event", "progress"}, {"step", 4}, {"loss", 9.0}, {"steps_per_second", 10.0}, {"phase", "original"}},
      // killed after a checkpoint at step 2; the resumed run:
      {{"event", "start"}, {"step", 2}, {"resumed", true}},
      {{"event", "progress"}, {"step", 4}, {"loss", 1.0}, {"steps_per_second", 10.0}, {"phase", "original"}},
      {{"event", "eval"}, {"step", 4}, {"metrics", {{"accuracy", 0.7}, {"loss", 0.9}}}, {"seconds", 0.5}},
      {{"event", "end"}, {"step", 4}, {"steps", 4}, {"train_seconds", 0.2}, {"compile_seconds", 1.0}},
  };
  const report::Run r = run_from_records(records, "cnn", "dir");
  ASSERT_EQ(r.loss.size(), 2u);
  EXPECT_EQ(r.loss[1].y, 1.0);
  EXPECT_EQ(r.facts["model"], "cnn");
  EXPECT_EQ(r.facts["resumed_from_step"], 2);
  EXPECT_EQ(r.facts["test_accuracy"], 0.7);
  EXPECT_EQ(r.facts["eval_seconds"], 0.5);
  EXPECT_FALSE(r.low_steps);
}

struct Files {
  fs::path dir = testkit::fresh_dir("report-inputs");
  Files() { fs::create_directories(dir); }
  ~Files() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
};

std::string message_of(const std::string& path) {
  try {
    load_run(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LoadRun, BadInputsAreErrorsNamingTheFile) {
  Files f;
  const std::string missing = (f.dir / "missing.jsonl").string();
  EXPECT_NE(message_of(missing).find("'" + missing + "': no such file"), std::string::npos) << message_of(missing);
  fs::create_directories(f.dir / "model");
  EXPECT_NE(message_of((f.dir / "model").string()).find("is a directory without summaries.jsonl"), std::string::npos);
  const std::string empty = f.write("empty.jsonl", "");
  EXPECT_NE(message_of(empty).find("'" + empty + "' holds no kiln record (it is empty)"), std::string::npos);
  const std::string csv = f.write("x.csv", "step,loss\n1,2\n");
  EXPECT_NE(message_of(csv).find("holds no kiln record (line 1: not JSON"), std::string::npos) << message_of(csv);
  const std::string no_steps = f.write("interrupted.jsonl", "{\"event\":\"interrupted\",\"step\":0}\n");
  EXPECT_NE(message_of(no_steps).find("records no training step"), std::string::npos) << message_of(no_steps);
}

TEST(LoadRun, AModelDirectoryAndATornRecordWhichIsNoted) {
  Files f;
  fs::create_directories(f.dir / "run-a");
  {
    SummaryWriter w(summary_path((f.dir / "run-a").string()));
    for (const json& r : metrics_out_records()) w.write(r);
  }
  std::ofstream(summary_path((f.dir / "run-a").string()), std::ios::app) << "{\"event\":\"progr";
  const report::Run r = load_run((f.dir / "run-a").string());
  EXPECT_EQ(r.label, "run-a");
  EXPECT_EQ(r.loss.size(), 4u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("line 8: torn last record"), std::string::npos) << r.notes[0];
  EXPECT_EQ(load_run((f.dir / "run-a").string() + "/", "mine").label, "mine");
  const std::string file = f.write("fast1-seed0.jsonl", metrics_out_records()[0].dump() + "\n");
  EXPECT_EQ(load_run(file).label, "fast1-seed0");
}

TEST(RenderReport, APageWithLegendChartsTableAndWhatWasSkipped) {
  std::vector<report::Run> runs{run_from_records(metrics_out_records(), "fast1 <b>", "m.jsonl")};
  runs.push_back(run_from_records({metrics_out_records()[0]}, "second", "s.jsonl"));
  ReportOptions o;
  o.skipped.push_back("[report] 'gone.jsonl': no such file or directory");
  const std::string html = render_report(runs, o);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<b>"), std::string::npos) << "labels are escaped";
  EXPECT_NE(html.find("fast1 &lt;b&gt;"), std::string::npos);
  EXPECT_NE(html.find("id=\"loss\""), std::string::npos);
  EXPECT_NE(html.find("id=\"rate\""), std::string::npos);
  EXPECT_NE(html.find("Evaluation: accuracy"), std::string::npos);
  EXPECT_NE(html.find("class=\"switch-marker\""), std::string::npos);
  EXPECT_NE(html.find("switch at 5 (requested 5, step)"), std::string::npos);
  EXPECT_NE(html.find("0.3 s saved"), std::string::npos) << "time saved by the switch, in the table";
  EXPECT_NE(html.find("&#39;gone.jsonl&#39;: no such file"), std::string::npos);
  // Self-contained: nothing is fetched.
  for (const char* outside : {"src=", "href=", "<link", "@import"}) EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(url\([^#])"))) << "only references inside the page";
}

TEST(WriteReport, WritesAtomicallyAndNamesAPathItCannotWrite) {
  Files f;
  const std::string path = (f.dir / "r.html").string();
  write_report("<p>one</p>", path);
  write_report("<p>two</p>", path);
  EXPECT_EQ(testkit::read_file(path), "<p>two</p>");
  EXPECT_EQ(std::distance(fs::directory_iterator(f.dir), fs::directory_iterator()), 1) << "no temp file left";
  try {
    write_report("x", (f.dir / "no" / "r.html").string());
    FAIL();
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '" + (f.dir / "no" / "r.html").string() + "'"), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::report
