// describe(): the effective settings of a run, for `kiln train --dry-run`.
#include <sstream>

#include "kiln/train/config.h"

namespace kiln {
namespace {

std::string or_unset(const std::string& s) { return s.empty() ? "unset" : "'" + s + "'"; }

std::string every(int64_t n, std::string_view zero) {
  return n == 0 ? std::string(zero) : "every " + std::to_string(n) + " step" + (n == 1 ? "" : "s");
}

void describe_accelerate(std::ostream& os, const ExperimentalConfig& x, const std::optional<AccelerateTrainMode>& mode,
                         PrecisionPolicy base, int64_t max_steps) {
  if (!mode) {
    os << "accelerate_train_mode:    off\n";
    return;
  }
  const PrecisionPolicy low = low_phase_policy(*mode);
  os << "accelerate_train_mode:    " << mode->to_string() << (mode->ratio_given ? "" : " (default ratio)") << "\n"
     << "  low phase policy:       " << precision_policy_name(low)
     << (needs_loss_scaling(low) ? " (dynamic loss scaling)" : "") << "\n"
     << "  after the switch:       " << precision_policy_name(base) << " (original precision, one way)\n";
  if (mode->split == AccelerateTrainMode::Split::step) {
    os << "  planned switch:         ";
    if (max_steps > 0) {
      const int64_t at = mode->switch_step(max_steps);
      os << "switch to original precision at step " << at << " of " << max_steps << " (" << at
         << " low-precision step" << (at == 1 ? "" : "s") << ")\n";
    } else {
      os << "after " << mode->ratio << " of total_step (total not known yet)\n";
    }
    return;
  }
  os << "  planned switch:         switch to original precision once the mean of the last "
     << x.accelerate_loss_window << " losses is <= " << mode->ratio << " x final_loss\n";
  if (x.accelerate_max_low_share >= 1) {
    os << "  low-precision cap:      none\n";
  } else if (max_steps > 0) {
    // The cap is a share of the steps, rounded down like the step split.
    const AccelerateTrainMode cap{.split = AccelerateTrainMode::Split::step, .ratio = x.accelerate_max_low_share};
    os << "  low-precision cap:      at step " << cap.switch_step(max_steps) << " of " << max_steps
       << " at the latest (" << x.accelerate_max_low_share << " of the steps)\n";
  } else {
    os << "  low-precision cap:      " << x.accelerate_max_low_share << " of the steps\n";
  }
}

}  // namespace

std::string describe(const RunConfig& cfg, int64_t max_steps) { return describe(cfg, cfg.validate(), max_steps); }

std::string describe(const RunConfig& cfg, const ParsedRunConfig& parsed, int64_t max_steps) {
  const ExperimentalConfig& x = cfg.experimental_config;
  const PrecisionPolicy base = effective_policy(cfg);
  std::ostringstream os;
  os << "precision_mode:           " << or_unset(cfg.precision_mode) << "\n"
     << "precision_mode_v2:        " << or_unset(cfg.precision_mode_v2) << "\n"
     << "precision policy:         " << precision_policy_name(base)
     << (cfg.precision_mode.empty() && cfg.precision_mode_v2.empty() ? " (default: must_keep_origin_dtype)" : "")
     << "\n";
  describe_accelerate(os, x, parsed.accelerate_train_mode, base, max_steps);
  os << "max_steps:                " << (max_steps > 0 ? std::to_string(max_steps) : "not given") << "\n"
     << "iterations_per_loop:      " << cfg.iterations_per_loop << "\n"
     << "graph_compiler_cache_dir: " << (x.graph_compiler_cache_dir.empty() ? "off" : x.graph_compiler_cache_dir);
  if (!x.graph_compiler_cache_dir.empty())
    os << " (cap " << format_byte_size(x.cache_size_cap_bytes) << ", "
       << (x.cache_strict ? "strict: cache errors fail the run" : "lenient: cache errors only warn") << ")";
  os << "\n"
     << "model_dir:                " << (cfg.model_dir.empty() ? "none (no checkpoints)" : cfg.model_dir) << "\n";
  if (!cfg.model_dir.empty())
    os << "checkpoints:              " << every(cfg.save_checkpoints_steps, "at the end only") << ", keep "
       << (cfg.keep_checkpoint_max == 0 ? "all" : std::to_string(cfg.keep_checkpoint_max)) << "\n"
       << "summaries:                " << every(cfg.save_summary_steps, "off") << "\n";
  os << "log:                      " << every(cfg.log_step_count_steps, "off") << "\n"
     << "threads:                  " << (cfg.num_threads == 0 ? "auto (one per core)" : std::to_string(cfg.num_threads))
     << "\n"
     << "all_reduce buckets:       "
     << (cfg.all_reduce_bucket_bytes == 0 ? "none (one MPI call per gradient)"
                                          : format_byte_size(cfg.all_reduce_bucket_bytes) + " per MPI call")
     << " (data-parallel jobs)\n"
     << "all_reduce overlap:       " << (cfg.all_reduce_overlap ? "on" : "off") << " (data-parallel jobs)\n"
     << "random_seed:              "
     << (cfg.random_seed ? std::to_string(*cfg.random_seed) : "unset (chosen at run time)") << "\n";
  return os.str();
}

}  // namespace kiln
