// The step loop's guard against a step that does not advance global_step. The loop runs
// until global_step reaches max_steps, so such a step (a compiled object that does nothing,
// a train_op that leaves the counter alone) would otherwise loop forever.
#pragma once
#include <cstdint>

namespace kiln {

// Throws kiln::Error "[train] global_step did not advance ..." unless after > before.
void require_step_advanced(int64_t before, int64_t after);

}  // namespace kiln
