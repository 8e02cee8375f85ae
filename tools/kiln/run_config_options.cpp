#include "run_config_options.h"

#include <string>

#include "kiln/base/error.h"

namespace kiln {
namespace {

// A size in bytes: "2G", "512M", 1048576 (parse_byte_size; errors name the option).
CLI::Option* byte_size_option(CLI::App& app, const std::string& name, int64_t& bytes, const std::string& help) {
  return app
      .add_option_function<std::string>(
          name,
          [&bytes, name](const std::string& text) {
            try {
              bytes = parse_byte_size(text, name);
            } catch (const ConfigError& e) {
              throw CLI::ValidationError(e.what());
            }
          },
          help)
      ->type_name("SIZE");
}

}  // namespace

void add_run_config_options(CLI::App& app, RunConfig& cfg) {
  ExperimentalConfig& x = cfg.experimental_config;
  const std::string group = "Run configuration";
  auto opt = [&](CLI::Option* o) { o->group(group); };

  opt(app.add_option("--precision-mode", cfg.precision_mode,
                     "Base precision: allow_fp32_to_fp16, force_fp16, force_fp32, must_keep_origin_dtype "
                     "(default), allow_mix_precision, allow_mix_precision_fp16, allow_mix_precision_bf16, "
                     "allow_fp32_to_bf16")
          ->type_name("MODE"));
  opt(app.add_option("--precision-mode-v2", cfg.precision_mode_v2,
                     "Base precision, newer names: origin, fp16, mixed_float16, mixed_bfloat16, "
                     "cube_fp16in_fp32out. Not together with --precision-mode")
          ->type_name("MODE"));
  opt(app.add_option("--accelerate-train-mode", x.accelerate_train_mode,
                     "Train a share in low precision, then finish in the original one: TYPE|SPLIT[|RATIO], "
                     "TYPE fast (float16) or fast1 (bfloat16); SPLIT step (RATIO 0.2..0.9 of the steps, "
                     "default 0.9) or loss (until loss <= RATIO x final loss, 1.01..1.5, default 1.05). "
                     "E.g. fast1|step|0.9")
          ->type_name("MODE"));
  opt(app.add_option("--accelerate-loss-window", x.accelerate_loss_window,
                     "Loss split: compare the mean of this many recent losses with the target")
          ->capture_default_str());
  opt(app.add_option("--accelerate-max-low-share", x.accelerate_max_low_share,
                     "Loss split: switch anyway after this share of the steps, in (0, 1]; 1 = no cap")
          ->capture_default_str());
  opt(app.add_option("--graph-compiler-cache-dir", x.graph_compiler_cache_dir,
                     "Cache compiled graphs in this directory (created if missing); empty = no cache")
          ->type_name("DIR"));
  opt(byte_size_option(app, "--cache-size-cap", x.cache_size_cap_bytes,
                       "Largest total size of the compile cache before old entries are evicted, in bytes or "
                       "with a K/M/G/T suffix (default 2G)"));
  opt(app.add_flag("--cache-strict", x.cache_strict,
                   "Fail the run when the compile cache cannot be used (default: warn and compile)"));
  opt(app.add_option("--remote-cache", x.graph_compiler_remote_cache,
                     "A shared tier behind the compile cache, redis[s]://[USER@]HOST[:PORT][/DB] (default: $KILN_REMOTE_CACHE; "
                     "a password from $KILN_REMOTE_CACHE_PASSWORD_FILE or $KILN_REMOTE_CACHE_PASSWORD); "
                     "its entries are signed with --remote-cache-key-file")
          ->type_name("URL"));
  opt(app.add_option("--remote-cache-key-file", x.graph_compiler_remote_cache_key_file,
                     "The HMAC-SHA256 key of the remote cache's entries: a file of 16 bytes or more that only you can "
                     "read, mode 600 (default: $KILN_REMOTE_CACHE_KEY_FILE)")
          ->type_name("FILE"));
  opt(app.add_option("--iterations-per-loop", cfg.iterations_per_loop,
                     "Steps per call into the compiled step (the small loop), >= 1")
          ->capture_default_str());
  opt(app.add_option("--model-dir", cfg.model_dir, "Directory for checkpoints and summaries; empty = none")
          ->type_name("DIR"));
  opt(app.add_option("--save-checkpoints-steps", cfg.save_checkpoints_steps,
                     "Checkpoint every N steps; 0 = only at the end")
          ->capture_default_str());
  opt(app.add_option("--keep-checkpoint-max", cfg.keep_checkpoint_max, "Checkpoints to keep; 0 = all")
          ->capture_default_str());
  opt(app.add_option("--log-step-count-steps", cfg.log_step_count_steps,
                     "Log loss and steps/s every N steps; 0 = off")
          ->capture_default_str());
  opt(app.add_option("--save-summary-steps", cfg.save_summary_steps, "Append a summary record to MODEL_DIR/summaries.jsonl every N steps (kiln report reads it); 0 = off")
          ->capture_default_str());
  opt(app.add_option("--threads", cfg.num_threads, "Threads for kernels; 0 = one per core")
          ->capture_default_str());
  opt(byte_size_option(app, "--all-reduce-bucket-size", cfg.all_reduce_bucket_bytes,
                       "Data-parallel jobs (mpirun): sum the gradients over the ranks in buckets of at most this "
                       "many bytes, one MPI call each, in bytes or with a K/M/G suffix; 0 = one call per gradient "
                       "(default 25M)"));
  opt(app.add_option("--all-reduce-overlap", cfg.all_reduce_overlap,
                     "Data-parallel jobs (mpirun): start each bucket's sum when its gradients exist and compute on "
                     "while it runs (on), or sum each where it stands (off)")
          ->transform(CLI::IsMember({"on", "off"}))
          ->default_str("on"));
}

}  // namespace kiln
