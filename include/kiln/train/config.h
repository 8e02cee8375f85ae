// Run configuration: ExperimentalConfig and RunConfig (the seed's NPURunConfig), and the
// parsed form of accelerate_train_mode (docs/accelerate.md).
//
// Options stay strings, spelled as in the seed, so that user code reads like the seed:
//
//   kiln::ExperimentalConfig experimental{.accelerate_train_mode = "fast|step|0.9"};
//   kiln::RunConfig config{.experimental_config = experimental};
//   config.validate();  // throws kiln::ConfigError naming option, value and what is valid
//
// The parsed_* accessors give typed values; every rejection anywhere here is a ConfigError
// whose message starts with the option in brackets, e.g.
//   [accelerate_train_mode] ratio '0.95' is out of range 0.2..0.9 for split 'step'
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/cache/cache_settings.h"
#include "kiln/backend/compiler.h"  // kDefaultAllReduceBucketBytes
#include "kiln/ir/dtype.h"
#include "kiln/base/error.h"  // ConfigError, thrown by everything here
#include "kiln/train/precision.h"

namespace kiln {

// The most kernel threads a run may ask for (RunConfig::num_threads, --threads): OpenMP
// builds a team of that size, and far beyond the machine's cores it only thrashes (100000
// crashed inside libgomp).
inline constexpr int kMaxThreads = 1024;

// accelerate_train_mode = "TYPE|SPLIT[|RATIO]", e.g. "fast|step|0.9", "fast1|loss".
//   TYPE   fast  = low phase in float16 (mixed_float16)
//          fast1 = low phase in bfloat16 (mixed_bfloat16)
//   SPLIT  step: RATIO = share of the total steps trained low, 0.2..0.9, default 0.9
//          loss: train low while loss > RATIO * final_loss, 1.01..1.5, default 1.05
// Ranges are inclusive. Names are lower-case; no spaces, no empty or extra fields.
struct AccelerateTrainMode {
  enum class LowType : uint8_t { float16, bfloat16 };  // "fast", "fast1"
  enum class Split : uint8_t { step, loss };

  static constexpr double kDefaultStepRatio = 0.9;
  static constexpr double kMinStepRatio = 0.2;
  static constexpr double kMaxStepRatio = 0.9;
  static constexpr double kDefaultLossRatio = 1.05;
  static constexpr double kMinLossRatio = 1.01;
  static constexpr double kMaxLossRatio = 1.5;

  LowType type = LowType::float16;
  Split split = Split::step;
  double ratio = kDefaultStepRatio;
  bool ratio_given = false;  // false: RATIO was omitted and ratio holds the split's default

  // Throws ConfigError "[accelerate_train_mode] ..." naming the field, the value and what
  // is valid. The empty string is an error here (RunConfig treats it as "off").
  static AccelerateTrainMode parse(std::string_view text);

  // Canonical form, always with three fields: "fast|step|0.9", "fast1|loss|1.05".
  // parse(to_string()) gives back the same type, split and ratio.
  std::string to_string() const;

  // Step split: the number of low-precision steps, floor(ratio * total_steps), exact for
  // the decimal the user wrote (0.9 * 10 = 9, 0.3 * 10 = 3). The first original-precision
  // step is this (0-based) step. Throws ConfigError "[total_step]" for total_steps < 0.
  int64_t switch_step(int64_t total_steps) const;
  // Loss split: the loss below which training switches, ratio * final_loss.
  double loss_target(double final_loss) const { return ratio * final_loss; }

  // The low phase's type, as its policy (low_phase_policy) computes in.
  DType low_dtype() const { return kiln::low_dtype(low_phase_policy(*this)); }
  bool operator==(const AccelerateTrainMode&) const = default;
};

// "fast"/"fast1", "step"/"loss".
std::string_view low_type_name(AccelerateTrainMode::LowType t);
std::string_view split_name(AccelerateTrainMode::Split s);

struct CpuFeatures;
// One line saying why the low phase of `mode` runs slower than the original precision
// with the CPU backend on a CPU with these features (and what to use instead), or "" when
// it can run faster. float16_kernels: the installed oneDNN runs float16 matmuls natively
// here (onednn::has_f16_kernels); they are faster than float32 only with AMX-FP16. The
// Estimator prints it when training starts.
std::string accelerate_hardware_note(const AccelerateTrainMode& mode, const CpuFeatures& cpu, bool float16_kernels);

// The seed's ExperimentalConfig plus the options kiln adds. Every field is optional.
struct ExperimentalConfig {
  // Non-empty: compiled graphs are cached in (and loaded from) this directory, which kiln
  // creates (mode 0700) if needed.
  std::string graph_compiler_cache_dir{};
  // Non-empty: low-precision acceleration, see AccelerateTrainMode.
  std::string accelerate_train_mode{};

  // kiln: the cache is pruned (least recently used first) to stay under this many bytes.
  int64_t cache_size_cap_bytes = kDefaultCacheSizeCap;
  // kiln: false = a cache that cannot work warns and compiles without it; true = error.
  bool cache_strict = false;
  // kiln: a remote tier behind graph_compiler_cache_dir, shared by jobs and hosts:
  // "redis[s]://[USER@]HOST[:PORT][/DB]" (empty: KILN_REMOTE_CACHE, if set). Its entries are signed
  // with HMAC-SHA256 under the key in graph_compiler_remote_cache_key_file (empty:
  // KILN_REMOTE_CACHE_KEY_FILE), a file only this user can read; without one the remote
  // is refused. Needs graph_compiler_cache_dir (the local tier it fills).
  std::string graph_compiler_remote_cache{};
  std::string graph_compiler_remote_cache_key_file{};
  // kiln, loss split: the switch compares the mean of the last N finite losses (not one
  // raw loss) with the target. >= 1.
  int64_t accelerate_loss_window = 20;
  // kiln, loss split: switch anyway once this share of max_steps has run in low precision,
  // so an unreachable target cannot keep a run low forever. In (0, 1]; 1 = no cap.
  double accelerate_max_low_share = 0.95;

  // The cache settings above as the compiler takes them (the lock timeout at its default).
  // graph_compiler_cache_dir empty: KILN_CACHE_DIR, if set.
  CacheSettings cache_settings() const;

  // Empty accelerate_train_mode -> nullopt; otherwise AccelerateTrainMode::parse.
  std::optional<AccelerateTrainMode> parsed_accelerate_train_mode() const;
};

// What RunConfig::validate() parsed. A run resolves its configuration once and hands these
// values on: the Estimator keeps them (Estimator::parsed_config()), `kiln train` reads them
// from it, and nothing parses the option strings again.
struct ParsedRunConfig {
  std::optional<AccelerateTrainMode> accelerate_train_mode;  // nullopt: off
};

// The seed's NPURunConfig, with TensorFlow RunConfig's usual fields.
struct RunConfig {
  ExperimentalConfig experimental_config{};
  // Empty = unset. At most one of the two may be set. See precision.h.
  std::string precision_mode{};
  std::string precision_mode_v2{};
  // Steps run per call into the compiled step (the seed's "small loop"). >= 1.
  int64_t iterations_per_loop = 1;
  // Checkpoints and summaries go here; empty = no checkpoints.
  std::string model_dir{};
  // Checkpoint every N steps (>= 0); 0 = only at the end of train(). Needs model_dir.
  int64_t save_checkpoints_steps = 1000;
  // Checkpoints kept (>= 0, oldest deleted first); 0 = keep all.
  int64_t keep_checkpoint_max = 5;
  // Log loss and steps/s every N steps (>= 0); 0 = off.
  int64_t log_step_count_steps = 100;
  // Append a summary record to model_dir/summaries.jsonl every N steps (>= 0; see
  // kiln/train/summary.h); 0 = off. Needs model_dir.
  int64_t save_summary_steps = 100;
  // Threads for kernels (>= 0); 0 = one per available core.
  int num_threads = 0;  // 0 = one per core; at most kMaxThreads
  // Data-parallel jobs (mpirun, kiln/dist/world.h): gradients are summed over the ranks in
  // buckets of at most this many bytes, one MPI_Allreduce each, like Horovod's tensor
  // fusion and PyTorch DDP's bucket_cap_mb (>= 0; 0 = one call per gradient). Default
  // 25 MiB. Changes no value: a sum over ranks is the same in any bucket.
  int64_t all_reduce_bucket_bytes = kDefaultAllReduceBucketBytes;
  // Data-parallel jobs: a compiled step starts each bucket's sum as soon as its gradients
  // exist and computes on while a thread of its own talks to MPI, waiting only where the
  // sum is read (PyTorch DDP's and Horovod's overlap). false: each bucket is summed where
  // it stands, the step waiting. Changes no value.
  bool all_reduce_overlap = true;
  // Unset: the run picks a seed and logs it.
  std::optional<uint64_t> random_seed{};

  // Applies every single-field and cross-field rule; throws the first ConfigError:
  // unknown precision modes; precision_mode together with precision_mode_v2;
  // iterations_per_loop < 1; negative intervals, counts or threads; cache size cap <= 0;
  // loss window < 1; max low share outside (0, 1]; a bad accelerate_train_mode; and
  // accelerate_train_mode with a precision mode other than allow_fp32_to_fp16,
  // must_keep_origin_dtype or origin. Paths with a NUL byte are rejected. Returns what it
  // parsed.
  ParsedRunConfig validate() const;

  // Empty -> nullopt; otherwise the parsed value (ConfigError for an unknown one).
  std::optional<PrecisionMode> parsed_precision_mode() const;
  std::optional<PrecisionModeV2> parsed_precision_mode_v2() const;
};
using NPURunConfig = RunConfig;

// The same for precision_mode / precision_mode_v2: a one-line note when the mode asks for
// float16 (or bfloat16) arithmetic this CPU and oneDNN do not have, so that it runs slower
// than the original precision, naming the faster choice; "" otherwise. The Estimator
// prints it when training starts.
std::string precision_mode_note(const RunConfig& config, const CpuFeatures& cpu, bool float16_kernels);

// Multi-line summary of the effective settings for `kiln train --dry-run`: precision
// policy, accelerate_train_mode with its low-phase policy and the planned switch
// ("switch to original precision at step 9000 of 10000", or the loss target), loop size,
// cache, checkpoints, logging, threads, seed. Runs cfg.validate() first (so it throws the
// same ConfigError). max_steps <= 0 means the total is not known yet.
std::string describe(const RunConfig& cfg, int64_t max_steps);
// The same for a configuration already validated into `parsed`.
std::string describe(const RunConfig& cfg, const ParsedRunConfig& parsed, int64_t max_steps);

// "2147483648", "2G", "512M", "64k", "2GiB", "1TB": an integer count of bytes with an
// optional K/M/G/T suffix (powers of 1024, any case, optionally followed by "B" or "iB").
// Anything else (a sign, spaces, a fraction, more than INT64_MAX bytes) throws ConfigError
// "[<option>] ...". Zero parses; RunConfig::validate() rejects a zero cap.
int64_t parse_byte_size(std::string_view text, std::string_view option = "cache_size_cap_bytes");
// "2 GiB", "512 MiB", "1536 KiB", "100 B": the largest unit that divides exactly.
std::string format_byte_size(int64_t bytes);

}  // namespace kiln
