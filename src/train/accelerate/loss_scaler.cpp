#include "train/accelerate/loss_scaler.h"

#include <algorithm>
#include <cmath>

#include "kiln/train/checkpoint.h"

namespace kiln {

void LossScaler::update(bool grads_finite) {
  if (!enabled_) {
    skipped_ += !grads_finite;
    return;
  }
  if (!grads_finite) {
    scale_ *= 0.5;
    clean_ = 0;
    ++skipped_;
    return;
  }
  if (++clean_ >= kGrowthInterval) {
    scale_ = std::min(scale_ * 2.0, kMaxScale);
    clean_ = 0;
  }
}

nlohmann::json LossScaler::to_json() const {
  return {{"enabled", enabled_}, {"scale", scale_}, {"clean_steps", clean_}, {"skipped_steps", skipped_}};
}

LossScaler LossScaler::from_json(const nlohmann::json& j) {
  auto bad = [&](const char* field) -> CheckpointError {
    return CheckpointError("[checkpoint] the loss-scaler state has a missing or invalid '" + std::string(field) +
                           "': " + j.dump());
  };
  if (!j.is_object()) throw bad("loss_scaler");
  if (!j.contains("enabled") || !j["enabled"].is_boolean()) throw bad("enabled");
  if (!j.contains("scale") || !j["scale"].is_number()) throw bad("scale");
  if (!j.contains("clean_steps") || !j["clean_steps"].is_number_integer()) throw bad("clean_steps");
  if (!j.contains("skipped_steps") || !j["skipped_steps"].is_number_integer()) throw bad("skipped_steps");
  LossScaler s(j["enabled"].get<bool>());
  s.scale_ = j["scale"].get<double>();
  s.clean_ = j["clean_steps"].get<int64_t>();
  s.skipped_ = j["skipped_steps"].get<int64_t>();
  if (!std::isfinite(s.scale_) || s.scale_ <= 0 || s.scale_ > kMaxScale) throw bad("scale");
  if (s.clean_ < 0 || s.clean_ >= kGrowthInterval) throw bad("clean_steps");
  if (s.skipped_ < 0) throw bad("skipped_steps");
  return s;
}

}  // namespace kiln
