#include "train/step_progress.h"

#include "kiln/base/error.h"

namespace kiln {

void require_step_advanced(int64_t before, int64_t after) {
  if (after > before) return;
  KILN_THROW(Error) << "[train] global_step did not advance: it was " << before << " before a training step and is "
                    << after << " after it, so training would never reach max_steps. The step does not increment "
                       "global_step (its compiled code does nothing, or the train op skips the increment); training "
                       "stopped at step " << before << " and nothing was saved for this step";
}

}  // namespace kiln
