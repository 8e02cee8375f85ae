// Dynamic loss scaling for the float16 phase of accelerate_train_mode (docs/accelerate.md);
// the bfloat16 phase (fast1) needs none.
//
// The low-precision graph multiplies the loss by the scale before differentiating,
// divides the gradients by it, and skips the update when a gradient is not finite (see
// kLossScaleName in optimizer.h). After each such step the scaler sees whether the
// gradients were finite:
//   not finite -> scale * 0.5, clean-step count reset (the graph skipped the update);
//   finite     -> one more clean step; after kGrowthInterval in a row, scale * 2
//                 (never above kMaxScale).
// The scale starts at kInitialScale. Below kFloor it has collapsed: float16 cannot
// represent this model's gradients, and the precision switch leaves the low phase.
// A disabled scaler (bfloat16, the original precision) always reports 1 and never moves.
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

namespace kiln {

class LossScaler {
 public:
  static constexpr double kInitialScale = 65536.0;       // 2^16
  static constexpr double kMaxScale = 16777216.0;        // 2^24
  static constexpr double kFloor = 1.0;
  static constexpr int64_t kGrowthInterval = 2000;

  explicit LossScaler(bool enabled = false) : enabled_(enabled), scale_(enabled ? kInitialScale : 1.0) {}

  bool enabled() const { return enabled_; }
  double scale() const { return scale_; }
  int64_t clean_steps() const { return clean_; }      // finite steps since the last change
  int64_t skipped_steps() const { return skipped_; }  // steps whose update was skipped, in total
  bool collapsed() const { return enabled_ && scale_ < kFloor; }

  // After a step run with scale(): were all its gradients finite?
  void update(bool grads_finite);
  // Stops scaling (after the switch to the original precision); the counts stay.
  void disable() {
    enabled_ = false;
    scale_ = 1.0;
  }

  // {"enabled", "scale", "clean_steps", "skipped_steps"}; from_json accepts what
  // to_json wrote and throws CheckpointError naming a bad field otherwise.
  nlohmann::json to_json() const;
  static LossScaler from_json(const nlohmann::json& j);

 private:
  bool enabled_;
  double scale_;
  int64_t clean_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace kiln
