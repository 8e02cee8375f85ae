// `kiln train --metrics-out FILE`: JSON Lines records. A second sink of the Estimator's
// records (kiln/train/summary.h: start, progress every --log-every steps, scalars,
// precision_switch, end, eval), and of the command's own: interrupted, final.
#pragma once
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/train/summary.h"

namespace kiln::cli {

// The file is created at the first record, so a run that fails on bad input overwrites
// nothing; whether it can be created is checked up front (ConfigError "[metrics_out]").
// An empty path writes nothing.
class MetricsWriter : public RecordSink {
 public:
  explicit MetricsWriter(std::string path);
  void write(nlohmann::json record) override;
  // Keep a copy of every record from now on (for `kiln train --report`), also without a path.
  void keep_records() { keep_ = true; }
  const std::vector<nlohmann::json>& records() const { return kept_; }

 private:
  std::string path_;
  std::ofstream out_;
  bool keep_ = false;
  std::vector<nlohmann::json> kept_;
};

}  // namespace kiln::cli
