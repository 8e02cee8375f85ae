// The report's table: one column per run, one row per fact (model, configuration, steps,
// time split, the switch and what it saved, losses, accuracy, compile cache, versions, CPU).
#pragma once
#include <string>
#include <vector>

#include "kiln/report/report.h"

namespace kiln::report {

std::string summary_table(const std::vector<Run>& runs);

}  // namespace kiln::report
