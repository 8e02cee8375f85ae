// The small pieces of the Estimator API: modes, params, metrics, feature gating.
#include "kiln/base/error.h"
#include "kiln/train/estimator.h"
#include "kiln/train/precision.h"
#include "train/estimator_state.h"

namespace kiln {

std::string_view mode_name(ModeKeys m) {
  switch (m) {
    case ModeKeys::train: return "train";
    case ModeKeys::eval: return "eval";
    case ModeKeys::predict: return "predict";
  }
  return "?";
}

double Params::number(const std::string& key) const {
  auto it = map_.find(key);
  if (it == map_.end()) KILN_THROW(ConfigError) << "[params] no parameter '" << key << "'";
  if (auto* d = std::get_if<double>(&it->second)) return *d;
  KILN_THROW(ConfigError) << "[params] '" << key << "' is text ('" << std::get<std::string>(it->second)
                          << "'), expected a number";
}

const std::string& Params::text(const std::string& key) const {
  auto it = map_.find(key);
  if (it == map_.end()) KILN_THROW(ConfigError) << "[params] no parameter '" << key << "'";
  if (auto* s = std::get_if<std::string>(&it->second)) return *s;
  KILN_THROW(ConfigError) << "[params] '" << key << "' is a number (" << std::get<double>(it->second)
                          << "), expected text";
}

MetricSpec accuracy_metric(const Tensor& labels, const Tensor& predictions) {
  const Tensor hit = cast(equal(cast(predictions, DType::i64), cast(labels, DType::i64)), DType::f32);
  return {reduce_sum(hit), constant(labels.graph(), static_cast<double>(numel(labels.shape())))};
}

MetricSpec mean_metric(const Tensor& values) {
  const Tensor v = cast(values, DType::f32);
  return {reduce_sum(v), constant(values.graph(), static_cast<double>(numel(values.shape())))};
}

double Evaluation::at(const std::string& name) const {
  auto it = metrics.find(name);
  if (it != metrics.end()) return it->second;
  std::string have;
  for (const auto& [k, v] : metrics) have += (have.empty() ? "" : ", ") + k;
  KILN_THROW(ConfigError) << "[evaluate] no metric '" << name << "'; metrics: " << have;
}

BackendOptions Estimator::backend_options() const {
  BackendOptions b;
  b.backend = options_.backend;
  // The edge: the environment's defaults are read here, once per Estimator call.
  b.compile = with_environment_defaults(
      {.policy = effective_policy(config_),
       .cache = config_.experimental_config.cache_settings(),
       .all_reduce_bucket_bytes = config_.all_reduce_bucket_bytes});
  return b;
}

const CompileSummary& Estimator::compile_summary() const { return s_->compile; }

CacheOutcome CompileSummary::cache() const {
  if (cache_errors) return CacheOutcome::error;
  if (cache_misses) return CacheOutcome::miss;
  if (cache_hits) return CacheOutcome::hit;
  return CacheOutcome::off;
}

}  // namespace kiln
