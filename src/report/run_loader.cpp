// Records -> Run: what the report draws, from a summary file or a --metrics-out file
// (same event names, same field names; see kiln/train/summary.h).
#include <algorithm>
#include <filesystem>

#include "kiln/base/error.h"
#include "kiln/report/report.h"
#include "kiln/train/summary.h"

namespace kiln::report {
namespace {

using nlohmann::json;

bool is_number(const json& r, const char* key) { return r.contains(key) && r[key].is_number(); }
double num(const json& r, const char* key) { return r[key].get<double>(); }

// Keeps points at x <= last: a resumed run redoes what the killed run did after its checkpoint.
void truncate_after(std::vector<Point>& pts, double last) {
  pts.erase(std::remove_if(pts.begin(), pts.end(), [last](const Point& p) { return p.x > last; }), pts.end());
}

struct Progress {
  double step, steps_per_second;
  bool low;
};

class Builder {
 public:
  explicit Builder(Run& run) : run_(run) {}

  void add(const json& r) {
    const std::string event = r["event"].get<std::string>();
    if (event == "start") return start(r);
    if (event == "progress") return progress(r);
    if (event == "eval") return eval(r);
    if (event == "scalars") return scalars(r, r.value("step", 0.0));
    if (event == "precision_switch") return precision_switch(r);
    if (event == "end" || event == "final") return end(r);
    // "interrupted" and events of later kilns: nothing to draw.
  }

  void finish() {
    rates();
    low_phase();
    if (run_.precision_switch) run_.precision_switch->loss_split = mode_.find("|loss") != std::string::npos;
    Run& run = run_;
    if (!run.facts.contains("steps") && !run.loss.empty()) run.facts["steps"] = run.loss.back().x;
    if (eval_seconds_ > 0 && !run.facts.contains("eval_seconds")) run.facts["eval_seconds"] = eval_seconds_;
    if (train_seconds_ > 0) run.facts["train_seconds"] = train_seconds_;
    if (compile_seconds_ > 0) run.facts["compile_seconds"] = compile_seconds_;
    // The last evaluation is the run's test result when no final record said otherwise.
    for (const char* m : {"loss", "accuracy"}) {
      const std::string key = std::string("test_") + m;
      if (!run.facts.contains(key) && run.eval.count(m) && !run.eval[m].empty()) run.facts[key] = run.eval[m].back().y;
    }
  }

 private:
  void start(const json& r) {
    const double at = r.value("step", 0.0);
    truncate_after(run_.loss, at);
    for (auto* series : {&run_.eval, &run_.scalars})
      for (auto& [name, pts] : *series) truncate_after(pts, at);
    progress_.erase(std::remove_if(progress_.begin(), progress_.end(), [at](const Progress& p) { return p.step > at; }),
                    progress_.end());
    if (run_.precision_switch && run_.precision_switch->step > at) run_.precision_switch.reset();
    if (progress_.empty()) first_step_ = at;
    for (const char* key : {"kiln_version", "cpu", "isa", "backend", "config", "params", "max_steps"})
      if (r.contains(key)) run_.facts[key] = r[key];
    if (r.contains("params") && r["params"].contains("model")) run_.facts["model"] = r["params"]["model"];
    if (at > 0) run_.facts["resumed_from_step"] = at;
    const std::string mode = r.value("/config/accelerate_train_mode"_json_pointer, std::string());
    if (!mode.empty()) mode_ = mode;
  }

  void progress(const json& r) {
    if (!is_number(r, "step")) return;
    const double step = num(r, "step");
    const std::string phase = r.value("phase", std::string("original"));
    if (phase != "original") run_.low_phase = phase;
    if (is_number(r, "loss")) run_.loss.push_back({step, num(r, "loss")});
    if (is_number(r, "steps_per_second") && num(r, "steps_per_second") > 0)
      progress_.push_back({step, num(r, "steps_per_second"), phase != "original"});
    if (r.contains("scalars")) scalars(r, step);
  }

  void scalars(const json& r, double step) {
    if (!r.contains("scalars") || !r["scalars"].is_object()) return;
    for (const auto& [name, v] : r["scalars"].items())
      if (v.is_number()) run_.scalars[name].push_back({step, v.get<double>()});
  }

  // A summary's eval record has "metrics"; --metrics-out's has test_loss, test_accuracy.
  void eval(const json& r) {
    if (!is_number(r, "step")) return;
    const double step = num(r, "step");
    if (r.contains("metrics") && r["metrics"].is_object()) {
      for (const auto& [name, v] : r["metrics"].items())
        if (v.is_number()) run_.eval[name].push_back({step, v.get<double>()});
    } else {
      for (const auto& [key, v] : r.items())
        if (key.rfind("test_", 0) == 0 && v.is_number()) run_.eval[key.substr(5)].push_back({step, v.get<double>()});
    }
    if (is_number(r, "seconds")) eval_seconds_ += num(r, "seconds");
    if (is_number(r, "compile_seconds")) compile_seconds_ += num(r, "compile_seconds");
  }

  void precision_switch(const json& r) {
    if (!is_number(r, "step")) return;
    PrecisionSwitchMark m;
    m.step = r["step"].get<int64_t>();
    m.requested_step = is_number(r, "requested_step") ? r["requested_step"].get<int64_t>() : m.step;
    m.reason = r.value("reason", std::string());
    run_.precision_switch = m;
    if (r.contains("from") && r["from"].is_string()) run_.low_phase = r["from"].get<std::string>();
  }

  void end(const json& r) {
    const bool final_record = r["event"] == "final";
    for (const auto& [key, v] : r.items())
      if (key != "event" && key != "wall_time" && key != "train_seconds" && key != "compile_seconds") run_.facts[key] = v;
    if (is_number(r, "train_seconds")) train_seconds_ = (final_record ? 0 : train_seconds_) + num(r, "train_seconds");
    if (is_number(r, "compile_seconds"))
      compile_seconds_ = (final_record ? 0 : compile_seconds_) + num(r, "compile_seconds");
    if (!r.contains("accelerate") || !r["accelerate"].is_object()) return;
    const json& a = r["accelerate"];
    mode_ = a.value("mode", mode_);
    if (a.contains("low_phase") && a["low_phase"].is_string()) run_.low_phase = a["low_phase"].get<std::string>();
    // A switch in an earlier call of a resumed run has no record here: the summary has it.
    if (!run_.precision_switch && is_number(a, "switch_step")) {
      run_.precision_switch = PrecisionSwitchMark{a["switch_step"].get<int64_t>(),
                                                  a.value("requested_switch_step", int64_t{0}),
                                                  a.value("switch_reason", std::string())};
    }
    if (is_number(r, "steps") && r.contains("test_loss") && r["test_loss"].is_number() && final_record)
      for (const char* m : {"loss", "accuracy"}) {
        const std::string key = std::string("test_") + m;
        auto& pts = run_.eval[m];
        if (r.contains(key) && r[key].is_number() && (pts.empty() || pts.back().x != num(r, "steps")))
          pts.push_back({num(r, "steps"), r[key].get<double>()});
      }
  }

  // Steps/s against training seconds: the time a run's steps took, resumes included.
  void rates() {
    std::stable_sort(progress_.begin(), progress_.end(), [](const Progress& a, const Progress& b) { return a.step < b.step; });
    double t = 0, prev = first_step_;
    for (const Progress& p : progress_) {
      t += std::max(p.step - prev, 0.0) / p.steps_per_second;
      prev = p.step;
      run_.rate.push_back({t, p.steps_per_second});
      run_.rate_low.push_back(p.low);
    }
  }

  // The steps trained low: from the start to the switch, or (no switch) to the last low record.
  void low_phase() {
    Run& run = run_;
    if (!mode_.empty()) run.facts["accelerate_train_mode"] = mode_;
    if (mode_.empty() && run.low_phase.empty()) return;
    double to = -1;
    for (const Progress& p : progress_)
      if (p.low) to = p.step;
    if (run.precision_switch) to = static_cast<double>(run.precision_switch->step);
    if (to <= 0) return;
    run.low_steps = std::make_pair(0.0, to);
    double seconds = 0;  // the same span in training seconds
    for (size_t i = 0; i < progress_.size(); ++i)
      if (progress_[i].step <= to) seconds = run.rate[i].x;
    if (seconds > 0) run.low_seconds = std::make_pair(0.0, seconds);
  }

  Run& run_;
  std::vector<Progress> progress_;
  double first_step_ = 0;
  double eval_seconds_ = 0, train_seconds_ = 0, compile_seconds_ = 0;
  std::string mode_;
};

}  // namespace

std::string PrecisionSwitchMark::describe() const {
  const std::string& why = reason;
  if (loss_split) return std::to_string(step) + " (" + (why.empty() ? "" : why + "; ") + "cap " + std::to_string(requested_step) + ")";
  return std::to_string(step) + " (requested " + std::to_string(requested_step) + (why.empty() ? "" : ", " + why) + ")";
}

Run run_from_records(const std::vector<nlohmann::json>& records, std::string label, std::string source,
                     const std::vector<int64_t>& lines) {
  Run run;
  run.label = std::move(label);
  run.source = std::move(source);
  Builder b(run);
  for (size_t i = 0; i < records.size(); ++i) {
    // read_records checked the fields the Builder reads; a value it did not foresee costs
    // its record, named, never the page.
    try {
      b.add(records[i]);
    } catch (const nlohmann::json::exception& e) {
      run.notes.push_back(run.source + ":" + (i < lines.size() ? "line " + std::to_string(lines[i]) : "record " + std::to_string(i + 1)) +
                          ": skipped a \"" + records[i].value("event", std::string("?")) + "\" record: " + e.what());
    }
  }
  b.finish();
  return run;
}

Run load_run(const std::string& path, std::string label) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) KILN_THROW(DataError) << "[report] '" << path << "': no such file or directory";
  std::string file = path;
  if (fs::is_directory(path, ec)) {
    file = summary_path(path);
    if (!fs::exists(file, ec))
      KILN_THROW(DataError) << "[report] '" << path << "' is a directory without " << kSummaryFileName
                            << ": give a model directory trained with save_summary_steps > 0 (kiln train --model-dir"
                               " DIR --save-summary-steps N), or a --metrics-out file";
  }
  const RecordFile f = read_records(file);
  if (label.empty()) {
    const fs::path p = fs::path(path).lexically_normal();
    label = (p.has_filename() ? p.filename() : p.parent_path().filename()).string();
    if (!fs::is_directory(path, ec)) label = fs::path(label).stem().string();
  }
  Run run = run_from_records(f.records, std::move(label), path, f.record_lines);
  for (const auto& s : f.skipped) run.notes.push_back(file + ": " + s);
  if (f.records.empty())
    KILN_THROW(DataError) << "[report] '" << file << "' holds no kiln record"
                          << (f.lines == 0 ? " (it is empty)" : f.skipped.empty() ? "" : " (" + f.skipped.front() + ")");
  if (run.loss.empty() && run.eval.empty() && !run.facts.contains("steps"))
    KILN_THROW(DataError) << "[report] '" << file << "' records no training step (" << f.records.size()
                          << " record" << (f.records.size() == 1 ? "" : "s") << ", none of them progress, eval or final)";
  return run;
}

}  // namespace kiln::report
