// RunConfig::validate and the parsed accessors of RunConfig and ExperimentalConfig.
#include <cmath>

#include "kiln/train/config.h"

#include "cache/remote/remote.h"
#include "kiln/base/error.h"

namespace kiln {
namespace {

// The remote tier's settings, checked before any work: its address, its key file, and the
// local tier it fills.
void check_remote_cache(const CacheSettings& c) {
  if (c.remote_url.empty()) {
    if (!c.remote_key_file.empty())
      KILN_THROW(ConfigError) << "[graph_compiler_remote_cache_key_file] is set but no remote cache is: give "
                                 "graph_compiler_remote_cache (--remote-cache, KILN_REMOTE_CACHE) too, or leave it out";
    return;
  }
  cache::parse_redis_url(c.remote_url);
  if (c.dir.empty())
    KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] '" << c.remote_url
                            << "' is a tier behind the local cache: give graph_compiler_cache_dir too "
                               "(--graph-compiler-cache-dir, KILN_CACHE_DIR)";
  if (c.remote_key_file.empty())
    KILN_THROW(ConfigError) << "[graph_compiler_remote_cache] '" << c.remote_url
                            << "' needs a key file to sign and check its entries: give "
                               "graph_compiler_remote_cache_key_file / --remote-cache-key-file / "
                               "KILN_REMOTE_CACHE_KEY_FILE (a file only you can read, mode 600)";
  cache::read_hmac_key_file(c.remote_key_file);
  cache::read_remote_credentials();
}

void check_path(std::string_view option, const std::string& path) {
  if (path.find('\0') != std::string::npos)
    KILN_THROW(ConfigError) << "[" << option << "] path contains a NUL byte; give a plain file-system path";
}

void check_at_least(std::string_view option, int64_t value, int64_t min, std::string_view meaning) {
  if (value < min)
    KILN_THROW(ConfigError) << "[" << option << "] value '" << value << "' is invalid; valid: an integer >= "
                            << min << meaning;
}

void check_range(std::string_view option, int64_t value, int64_t min, int64_t max, std::string_view meaning) {
  if (value < min || value > max)
    KILN_THROW(ConfigError) << "[" << option << "] value '" << value << "' is invalid; valid: an integer from " << min
                            << " to " << max << meaning;
}

// accelerate_train_mode needs an original-precision base: precision_mode must_keep_origin_dtype,
// allow_fp32_to_fp16 or unset, and precision_mode_v2 origin or unset (docs/accelerate.md).
void check_accelerate_base(const RunConfig& cfg) {
  if (auto m = cfg.parsed_precision_mode(); m && !allows_accelerate_train_mode(*m))
    KILN_THROW(ConfigError) << "[accelerate_train_mode] not allowed with precision_mode '" << cfg.precision_mode
                            << "'; use must_keep_origin_dtype, allow_fp32_to_fp16 or leave it unset";
  if (auto m = cfg.parsed_precision_mode_v2(); m && !allows_accelerate_train_mode(*m))
    KILN_THROW(ConfigError) << "[accelerate_train_mode] not allowed with precision_mode_v2 '"
                            << cfg.precision_mode_v2 << "'; use origin or leave it unset";
}

std::optional<AccelerateTrainMode> validate_experimental(const ExperimentalConfig& x) {
  check_path("graph_compiler_cache_dir", x.graph_compiler_cache_dir);
  if (x.cache_size_cap_bytes <= 0)
    KILN_THROW(ConfigError) << "[cache_size_cap_bytes] value '" << x.cache_size_cap_bytes
                            << "' is invalid; valid: a size > 0 bytes, e.g. 2G (the default)";
  check_remote_cache(x.cache_settings());
  check_at_least("accelerate_loss_window", x.accelerate_loss_window, 1, " (number of recent losses averaged)");
  const double share = x.accelerate_max_low_share;
  if (!(share > 0 && share <= 1))  // also rejects NaN
    KILN_THROW(ConfigError) << "[accelerate_max_low_share] value '" << share
                            << "' is invalid; valid: a share in (0, 1], 1 = no cap";
  return x.parsed_accelerate_train_mode();
}

}  // namespace

CacheSettings ExperimentalConfig::cache_settings() const {
  CacheSettings c;
  c.dir = graph_compiler_cache_dir;
  c.size_cap_bytes = cache_size_cap_bytes;
  c.strict = cache_strict;
  c.remote_url = graph_compiler_remote_cache;
  c.remote_key_file = graph_compiler_remote_cache_key_file;
  return cache_with_environment_defaults(c);
}

std::optional<AccelerateTrainMode> ExperimentalConfig::parsed_accelerate_train_mode() const {
  if (accelerate_train_mode.empty()) return std::nullopt;
  return AccelerateTrainMode::parse(accelerate_train_mode);
}

std::optional<PrecisionMode> RunConfig::parsed_precision_mode() const {
  if (precision_mode.empty()) return std::nullopt;
  return parse_precision_mode(precision_mode);
}

std::optional<PrecisionModeV2> RunConfig::parsed_precision_mode_v2() const {
  if (precision_mode_v2.empty()) return std::nullopt;
  return parse_precision_mode_v2(precision_mode_v2);
}

ParsedRunConfig RunConfig::validate() const {
  (void)parsed_precision_mode();
  (void)parsed_precision_mode_v2();
  if (!precision_mode.empty() && !precision_mode_v2.empty())
    KILN_THROW(ConfigError) << "[precision_mode] cannot be combined with precision_mode_v2 (got '"
                            << precision_mode << "' and '" << precision_mode_v2 << "'); set only one";
  check_at_least("iterations_per_loop", iterations_per_loop, 1, " (steps per call into the compiled step)");
  check_path("model_dir", model_dir);
  check_at_least("save_checkpoints_steps", save_checkpoints_steps, 0, " (0 = only at the end)");
  check_at_least("keep_checkpoint_max", keep_checkpoint_max, 0, " (0 = keep all)");
  check_at_least("log_step_count_steps", log_step_count_steps, 0, " (0 = off)");
  check_at_least("save_summary_steps", save_summary_steps, 0, " (0 = off)");
  check_range("num_threads", num_threads, 0, kMaxThreads, " (0 = one per core)");
  check_at_least("all_reduce_bucket_bytes", all_reduce_bucket_bytes, 0, " (0 = one MPI call per gradient)");
  ParsedRunConfig parsed{.accelerate_train_mode = validate_experimental(experimental_config)};
  if (parsed.accelerate_train_mode) check_accelerate_base(*this);
  return parsed;
}

}  // namespace kiln
