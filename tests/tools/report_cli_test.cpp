// `kiln report` and `kiln train --report` as a user runs them: a page from a model
// directory and a metrics file, and clean answers to bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::run_kiln;

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name) : path(testkit::fresh_dir("report-cli-" + name)) { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

const char* kRecord = R"({"event":"progress","step":10,"loss":1.5,"steps_per_second":20,"phase":"original"})";

TEST(ReportCli, BadInputIsAClearErrorAndWritesNothing) {
  Dir d("bad");
  auto r = run_kiln("report " + d / "missing.jsonl" + " -o " + d / "r.html");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'" + d / "missing.jsonl" + "': no such file or directory")) << r.output;
  EXPECT_TRUE(contains(r.output, "no run could be read; nothing written")) << r.output;
  EXPECT_FALSE(fs::exists(d / "r.html"));

  std::ofstream(d / "m.jsonl") << kRecord << "\n";
  r = run_kiln("report " + d / "m.jsonl" + " -o " + d / "no/such/dir/r.html");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "[report] cannot write '" + d / "no/such/dir/r.html" + "'")) << r.output;

  r = run_kiln("report " + d / "m.jsonl" + " --label a --label b -o " + d / "r.html");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "[label] 2 labels for 1 runs")) << r.output;

  r = run_kiln("report -o " + d / "r.html");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "runs is required")) << r.output;
}

TEST(ReportCli, SummariesWithoutAModelDirectoryAreAConfigurationError) {
  const auto r = run_kiln("train --dry-run --save-summary-steps 10");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "[--save-summary-steps] summaries are written to the model directory")) << r.output;
  EXPECT_EQ(run_kiln("train --dry-run --save-summary-steps 0").status, 0);
}

TEST(ReportCli, LabelsMayFollowTheirRuns) {
  Dir d("labels");
  std::ofstream(d / "a.jsonl") << kRecord << "\n";
  std::ofstream(d / "b.jsonl") << kRecord << "\n";
  const auto r = run_kiln("report " + d / "a.jsonl" + " --label first " + d / "b.jsonl" + " --label 'fast1|step|0.9' -o " +
                          d / "r.html");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string html = testkit::read_file(d / "r.html");
  EXPECT_TRUE(contains(html, "</svg>first</li>")) << html.substr(0, 3000);
  EXPECT_TRUE(contains(html, "</svg>fast1|step|0.9</li>"));
  // Two runs of one name stay apart in the legend.
  fs::create_directories(d.path / "x");
  std::ofstream(d / "x/a.jsonl") << kRecord << "\n";
  ASSERT_EQ(run_kiln("report " + d / "a.jsonl" + " " + d / "x/a.jsonl" + " -o " + d / "r.html").status, 0);
  const std::string two = testkit::read_file(d / "r.html");
  EXPECT_TRUE(contains(two, "</svg>a</li>"));
  EXPECT_TRUE(contains(two, "</svg>a (2)</li>"));
}

// --title names the page (the browser tab and the heading), escaped as HTML.
TEST(ReportCli, TitleNamesThePage) {
  Dir d("title");
  std::ofstream(d / "a.jsonl") << kRecord << "\n";
  const auto r = run_kiln("report " + d / "a.jsonl" + " --title 'MLP <run 3>' -o " + d / "r.html");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string html = testkit::read_file(d / "r.html");
  EXPECT_TRUE(contains(html, "<title>MLP &lt;run 3&gt;</title>")) << html.substr(0, 600);
  EXPECT_TRUE(contains(html, "<h1>MLP &lt;run 3&gt;</h1>")) << html.substr(0, 600);
}

TEST(ReportCli, AnUnreadableRunIsSkippedAndTheReportSaysSo) {
  Dir d("skip");
  std::ofstream(d / "good.jsonl") << kRecord << "\n" << R"({"event":"progr)";
  std::ofstream(d / "notes.txt") << "just text\n";
  const auto r = run_kiln("report " + d / "good.jsonl" + " " + d / "notes.txt" + " " + d / "gone.jsonl" + " -o " +
                          d / "r.html");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "kiln report: skipped: [report] '" + d / "notes.txt" + "' holds no kiln record")) << r.output;
  EXPECT_TRUE(contains(r.output, "report: 1 run -> " + d / "r.html" + " (2 skipped)")) << r.output;
  EXPECT_TRUE(contains(r.output, "torn last record")) << r.output;
  const std::string html = testkit::read_file(d / "r.html");
  EXPECT_TRUE(contains(html, "<h2>Skipped</h2>"));
  EXPECT_TRUE(contains(html, "gone.jsonl&#39;: no such file or directory"));
  EXPECT_TRUE(contains(html, "line 2: torn last record"));
}

// A short accelerated run with a model directory: its summaries, its --report page, and a
// page over the directory and the metrics file together.
TEST(ReportCli, TrainWritesSummariesAndAReport) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  Dir d("train");
  const std::string model = d / "model";
  auto r = run_kiln("train --backend interp --steps 12 --batch-size 32 --train-limit 512 --test-limit 100 --quiet"
                    " --log-every 2 --save-summary-steps 3 --accelerate-train-mode 'fast1|step|0.5' --model-dir " +
                    model + " --metrics-out " + d / "m.jsonl" + " --report " + d / "train.html");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "report: " + d / "train.html")) << r.output;
  const std::string own = testkit::read_file(d / "train.html");
  EXPECT_TRUE(contains(own, "mlp fast1|step|0.5: switch at 6 (requested 6, step)")) << own.substr(0, 400);
  const std::string summaries = testkit::read_file(model + "/summaries.jsonl");
  EXPECT_TRUE(contains(summaries, R"("event":"precision_switch")")) << summaries;
  EXPECT_TRUE(contains(summaries, R"("event":"eval")")) << summaries;

  r = run_kiln("report " + model + " " + d / "m.jsonl" + " -o " + d / "both.html");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "report: 2 runs -> ")) << r.output;
  const std::string both = testkit::read_file(d / "both.html");
  EXPECT_TRUE(contains(both, "model: switch at 6 (requested 6, step)"));
  EXPECT_TRUE(contains(both, "m: switch at 6 (requested 6, step)"));
  EXPECT_TRUE(contains(both, ">mlp</td><td>mlp</td>")) << "the model, from the summaries and from the metrics file";
}

}  // namespace

namespace {

// A report never replaces what it reads: -o naming an input (a file, or a model
// directory's summaries) exits 2 and leaves the records as they were.
TEST(ReportCli, TheOutputMayNotBeAnInput) {
  Dir d("input-output");
  fs::create_directories(d.path / "run");
  std::ofstream(d / "run/summaries.jsonl") << kRecord << "\n";
  std::ofstream(d / "m.jsonl") << kRecord << "\n";
  for (const std::string& out : {d / "run/summaries.jsonl", d / "run/./summaries.jsonl", d / "m.jsonl"}) {
    const auto r = run_kiln("report " + d / "run" + " " + d / "m.jsonl" + " -o " + out);
    EXPECT_EQ(r.status, 2) << out << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "[report] the page would replace")) << r.output;
  }
  EXPECT_EQ(testkit::read_file(d / "run/summaries.jsonl"), std::string(kRecord) + "\n");
  EXPECT_EQ(testkit::read_file(d / "m.jsonl"), std::string(kRecord) + "\n");
  // kiln train --report onto its own --metrics-out file, before any training.
  const auto t = run_kiln("train --steps 1 --metrics-out " + d / "m.jsonl" + " --report " + d / "m.jsonl");
  EXPECT_EQ(t.status, 2) << t.output;
  EXPECT_TRUE(contains(t.output, "[--report] the page would replace")) << t.output;
  EXPECT_EQ(testkit::read_file(d / "m.jsonl"), std::string(kRecord) + "\n");
}

// One mistyped field costs its record, named by file, line and field; the rest renders.
// A record nested 100 000 levels deep is refused by the reader, not by the stack.
TEST(ReportCli, AMistypedOrDeeplyNestedRecordIsSkippedAndNamed) {
  Dir d("mistyped");
  std::ofstream(d / "m.jsonl") << kRecord << "\n"
                               << R"({"event":"progress","step":20,"loss":1.0,"steps_per_second":20,"phase":7})" << "\n"
                               << R"({"event":"progress","step":30,"loss":0.5,"steps_per_second":20,"phase":"original"})"
                               << "\n"
                               << R"({"event":"progress","step":40,"scalars":)" << std::string(100000, '[')
                               << std::string(100000, ']') << "}\n";
  const auto r = run_kiln("report " + d / "m.jsonl" + " -o " + d / "r.html");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "line 2: field \"phase\" of a \"progress\" record is 7; expected a string")) << r.output;
  EXPECT_TRUE(contains(r.output, "line 4: nested more than 64 levels deep")) << r.output;
  const std::string html = testkit::read_file(d / "r.html");
  EXPECT_TRUE(contains(html, "field &quot;phase&quot;") || contains(html, "field \"phase\"")) << "listed on the page";
  EXPECT_TRUE(contains(html, "id=\"loss\""));
}

}  // namespace
