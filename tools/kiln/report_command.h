// `kiln report RUN... -o report.html`: one HTML page over the runs' records (a model
// directory's summaries or a --metrics-out file; see kiln/report/report.h). An input that cannot
// be read is skipped with a warning and listed on the page; none readable exits 2.
// Also the end of `kiln train --report FILE`.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace kiln::cli {

class ReportCommand {
 public:
  explicit ReportCommand(CLI::App& parent);
  bool selected() const { return cmd_->parsed(); }
  int run();

 private:
  CLI::App* cmd_;
  std::vector<std::string> runs_, labels_;
  std::string out_, title_ = "kiln training report";
};

// ConfigError "[report] cannot write '<path>': ..." unless the report can be written there
// (checked before training, so a bad path costs no run).
// `inputs`: files (or model directories, for their summaries.jsonl) the page is made from
// or that the run writes: the page may not replace one (ConfigError naming it).
void check_report_path(const std::string& path, const std::vector<std::string>& inputs = {});
// `kiln train --report`: the page of this run's records.
void write_run_report(const std::vector<nlohmann::json>& records, const std::string& label, const std::string& path);

}  // namespace kiln::cli
