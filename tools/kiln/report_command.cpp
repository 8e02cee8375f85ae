#include "report_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "kiln/base/error.h"
#include "kiln/report/report.h"
#include "kiln/train/summary.h"

namespace kiln::cli {

ReportCommand::ReportCommand(CLI::App& parent) {
  cmd_ = parent.add_subcommand("report", "Write one HTML page (charts and a table) over the records of training runs");
  cmd_->add_option("runs", runs_, "Model directories (their summaries.jsonl) or --metrics-out files")->required();
  cmd_->add_option("-o,--output", out_, "The HTML file to write")->required();
  // One value per --label, so that labels may follow their runs: a.jsonl --label a b.jsonl --label b.
  cmd_->add_option("--label", labels_, "The legend text of each run, in order (default: the file or directory name)")
      ->allow_extra_args(false);
  cmd_->add_option("--title", title_, "The page's title")->capture_default_str();
}

namespace {
// The file an input names: a model directory's summaries, else the path itself.
std::filesystem::path input_file(const std::string& input) {
  std::error_code ec;
  if (std::filesystem::is_directory(input, ec)) return summary_path(input);
  return input;
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec)) return std::filesystem::equivalent(a, b, ec);
  return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
}
}  // namespace

void check_report_path(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) KILN_THROW(ConfigError) << "[report] cannot write '" << path << "': it is a directory";
  for (const auto& in : inputs)
    if (same_file(input_file(in), path))
      KILN_THROW(ConfigError) << "[report] the page would replace '" << input_file(in).string() << "', which holds "
                              << "the records of run '" << in << "': write the page to another file (e.g. report.html)";
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (::access(dir.c_str(), W_OK) != 0)
    KILN_THROW(ConfigError) << "[report] cannot write '" << path << "': " << dir << ": " << std::strerror(errno);
}

int ReportCommand::run() {
  if (!labels_.empty() && labels_.size() != runs_.size())
    KILN_THROW(ConfigError) << "[label] " << labels_.size() << " labels for " << runs_.size()
                            << " runs: give one --label per run, in order, or none";
  check_report_path(out_, runs_);
  std::vector<report::Run> runs;
  report::ReportOptions options;
  options.title = title_;
  std::string why_none;
  std::set<std::string> labels;
  for (size_t i = 0; i < runs_.size(); ++i) {
    try {
      runs.push_back(report::load_run(runs_[i], labels_.empty() ? "" : labels_[i]));
    } catch (const DataError& e) {
      std::fprintf(stderr, "kiln report: skipped: %s\n", e.what());
      options.skipped.push_back(e.what());
      why_none += std::string("\n  ") + e.what();
      continue;
    }
    // Two runs from files of the same name (a/run.jsonl, b/run.jsonl) keep apart in the legend.
    std::string& label = runs.back().label;
    const std::string base = label;
    for (int n = 2; labels.count(label); ++n) label = base + " (" + std::to_string(n) + ")";
    labels.insert(label);
    for (const auto& note : runs.back().notes) std::fprintf(stderr, "kiln report: note: %s\n", note.c_str());
  }
  if (runs.empty()) KILN_THROW(DataError) << "[report] no run could be read; nothing written:" << why_none;
  report::write_report(report::render_report(runs, options), out_);
  std::printf("report: %zu run%s -> %s%s\n", runs.size(), runs.size() == 1 ? "" : "s", out_.c_str(),
              options.skipped.empty() ? "" : (" (" + std::to_string(options.skipped.size()) + " skipped)").c_str());
  return 0;
}

void write_run_report(const std::vector<nlohmann::json>& records, const std::string& label, const std::string& path) {
  std::vector<report::Run> runs{report::run_from_records(records, label, "this run")};
  report::write_report(report::render_report(runs, {}), path);
  std::printf("report: %s\n", path.c_str());
}

}  // namespace kiln::cli
