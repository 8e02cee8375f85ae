#include "train/accelerate/loss_scaler.h"

#include <gtest/gtest.h>

#include "kiln/train/checkpoint.h"

namespace kiln {
namespace {

TEST(LossScaler, StartsAt2To16AndHalvesOnANonFiniteStep) {
  LossScaler s(true);
  EXPECT_EQ(s.scale(), 65536.0);
  s.update(false);
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_EQ(s.skipped_steps(), 1);
  s.update(true);
  s.update(false);
  EXPECT_EQ(s.scale(), 16384.0);
  EXPECT_EQ(s.clean_steps(), 0);  // an overflow restarts the count
  EXPECT_EQ(s.skipped_steps(), 2);
}

TEST(LossScaler, DoublesAfter2000CleanStepsInARow) {
  LossScaler s(true);
  s.update(false);  // 32768
  for (int i = 0; i < 1999; ++i) s.update(true);
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_EQ(s.clean_steps(), 1999);
  s.update(true);
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_EQ(s.clean_steps(), 0);
  // An overflow at step 1999 of the next interval resets the count.
  for (int i = 0; i < 1999; ++i) s.update(true);
  s.update(false);
  for (int i = 0; i < 1999; ++i) s.update(true);
  EXPECT_EQ(s.scale(), 32768.0);
}

TEST(LossScaler, NeverGrowsBeyondTheMaximum) {
  LossScaler s(true);
  for (int i = 0; i < 2000 * 20; ++i) s.update(true);
  EXPECT_EQ(s.scale(), LossScaler::kMaxScale);
}

TEST(LossScaler, CollapsesBelowTheFloor) {
  LossScaler s(true);
  int halvings = 0;
  while (!s.collapsed()) {
    s.update(false);
    ++halvings;
  }
  EXPECT_EQ(halvings, 17);  // 2^16 -> 2^-1
  EXPECT_LT(s.scale(), LossScaler::kFloor);
}

TEST(LossScaler, DisabledAlwaysReportsOne) {
  LossScaler s(false);
  s.update(false);
  s.update(true);
  EXPECT_EQ(s.scale(), 1.0);
  EXPECT_FALSE(s.collapsed());
  EXPECT_EQ(s.skipped_steps(), 1);
  LossScaler t(true);
  t.update(false);
  t.disable();
  EXPECT_EQ(t.scale(), 1.0);
  EXPECT_FALSE(t.enabled());
}

TEST(LossScaler, JsonRoundTripAndBadStates) {
  LossScaler s(true);
  s.update(false);
  for (int i = 0; i < 7; ++i) s.update(true);
  const LossScaler r = LossScaler::from_json(s.to_json());
  EXPECT_EQ(r.scale(), s.scale());
  EXPECT_EQ(r.clean_steps(), 7);
  EXPECT_EQ(r.skipped_steps(), 1);
  EXPECT_TRUE(r.enabled());
  for (const char* bad : {R"({"enabled":true,"scale":-1,"clean_steps":0,"skipped_steps":0})",
                          R"({"enabled":true,"scale":1e30,"clean_steps":0,"skipped_steps":0})",
                          R"({"enabled":true,"scale":4,"clean_steps":2000,"skipped_steps":0})",
                          R"({"enabled":"yes","scale":4,"clean_steps":0,"skipped_steps":0})",
                          R"({"scale":4,"clean_steps":0,"skipped_steps":0})", R"([1,2])"}) {
    try {
      LossScaler::from_json(nlohmann::json::parse(bad));
      ADD_FAILURE() << bad;
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("loss-scaler state"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln
