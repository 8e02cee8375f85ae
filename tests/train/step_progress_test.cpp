#include "train/step_progress.h"

#include <gtest/gtest.h>

#include "kiln/base/error.h"

namespace kiln {
namespace {

TEST(StepProgress, OnlyAStepThatAdvancesPasses) {
  EXPECT_NO_THROW(require_step_advanced(0, 1));
  EXPECT_NO_THROW(require_step_advanced(7, 9));
  for (int64_t after : {5, 4, -1}) {
    try {
      require_step_advanced(5, after);
      ADD_FAILURE() << after;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[train] global_step did not advance: it was 5 before a training step and "
                                            "is " + std::to_string(after) + " after it", 0),
                0u)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln
