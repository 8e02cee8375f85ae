// The TensorBoard side of the summaries: each record a SummaryWriter appends to
// summaries.jsonl is also written as events (train/summary/event_file.h) with the tags TensorFlow's
// Estimator uses where there is one, and kiln/... for kiln's own facts:
//   start             SessionLog START at the first step the call will log (its start + 1),
//                     so TensorBoard drops what an interrupted run logged after its checkpoint
//   progress          loss, global_step/sec, learning_rate, the hooks' scalars by their
//                     names; kiln/loss_scale (float16 phase) and, with accelerate_train_mode,
//                     kiln/low_precision (1 in the low phase, 0 after); histograms and
//                     images (summary.histogram / summary.image) as histo and image values
//   scalars           the hooks' scalars, histograms and images
//   precision_switch  kiln/precision_switch_step (the switch step, at that step)
//   eval              every metric by its name (loss among them), at the checkpoint's step
//   end               kiln/skipped_updates with accelerate_train_mode
// A null (non-finite) value is left out, as in the report. The event file is created with
// the first record, so a writer that writes nothing leaves no file.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/summary/event_file.h"

namespace kiln {

// A serialized tensorflow::Summary of these scalars and the histograms and images of
// `values` ({"histograms": {tag: {...}}, "images": {tag: {...}}}, as a summaries.jsonl
// record holds them): what a Session's run of a summary op returns.
std::string summary_bytes(const std::vector<std::pair<std::string, float>>& scalars, const nlohmann::json& values);

class SummaryEvents {
 public:
  // `dir`: the TensorBoard run directory (model_dir for training, model_dir/eval for
  // evaluation).
  explicit SummaryEvents(std::string dir) : dir_(std::move(dir)) {}
  void on_record(const nlohmann::json& record);
  void flush(bool sync) {
    if (file_) file_->flush(sync);
  }

 private:
  std::string dir_;
  std::unique_ptr<EventFile> file_;
  bool accelerate_ = false;
};

}  // namespace kiln
