#include "report_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "kiln/error.h"
#include "kiln/report.h"

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

void check_report_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) KILN_THROW(ConfigError) << "[report] cannot write '" << path << "': it is a directory";
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (::access(dir.c_str(), W_OK) != 0)
    KILN_THROW(ConfigError) << "[report] cannot write '" << path << "': " << dir << ": " << std::strerror(errno);
}

int ReportCommand::run() {
  if (!labels_.empty() && labels_.size() != runs_.size())
    KILN_THROW(ConfigError) << "[label] " << labels_.size() << " labels for " << runs_.size()
                            << " runs: give one --label per run, in order, or none";
  check_report_path(out_);
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
