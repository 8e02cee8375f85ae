// accelerate_hardware_note: the start-up line that says when a low phase cannot pay off on
// this CPU (issue 17: fast on a CPU without float16 arithmetic is slower than the original).
#include <gtest/gtest.h>

#include "kiln/config.h"
#include "kiln/cpu_features.h"

namespace kiln {
namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

CpuFeatures cpu(bool avx512_bf16, bool amx_bf16, bool avx512_fp16) {
  CpuFeatures c;
  c.avx2 = c.f16c = true;
  c.avx512f = avx512_bf16 || amx_bf16 || avx512_fp16;
  c.avx512_bf16 = avx512_bf16;
  c.amx_bf16 = amx_bf16;
  c.avx512_fp16 = avx512_fp16;
  return c;
}

TEST(AccelerateHardware, Fast1IsQuietWhereBfloat16IsNativeAndSaysWhyNotElsewhere) {
  const auto fast1 = AccelerateTrainMode::parse("fast1|step|0.9");
  EXPECT_EQ(accelerate_hardware_note(fast1, cpu(true, false, false), false), "");  // Zen 4
  EXPECT_EQ(accelerate_hardware_note(fast1, cpu(true, true, true), false), "");    // Sapphire Rapids
  EXPECT_EQ(accelerate_hardware_note(fast1, cpu(false, true, false), false), "");
  const std::string avx2 = accelerate_hardware_note(fast1, cpu(false, false, false), false);
  EXPECT_TRUE(contains(avx2, "'fast1|step|0.9'")) << avx2;
  EXPECT_TRUE(contains(avx2, "no bfloat16 arithmetic (AVX512-BF16 or AMX)")) << avx2;
  EXPECT_TRUE(contains(avx2, "slower than the original precision")) << avx2;
  EXPECT_EQ(avx2.find('\n'), std::string::npos) << "one line";
}

TEST(AccelerateHardware, FastAlwaysSaysItIsSlowerAndNamesTheFastChoice) {
  const auto fast = AccelerateTrainMode::parse("fast|loss|1.05");
  for (const CpuFeatures& c : {cpu(true, false, false), cpu(true, true, true)}) {
    const std::string note = accelerate_hardware_note(fast, c, false);
    EXPECT_TRUE(contains(note, "'fast|loss|1.05'")) << note;
    EXPECT_TRUE(contains(note, "slower than the original precision")) << note;
    EXPECT_TRUE(contains(note, "fast1 (bfloat16) is the fast choice on this CPU")) << note;
  }
  const std::string avx2 = accelerate_hardware_note(fast, cpu(false, false, false), false);
  EXPECT_TRUE(contains(avx2, "this one has neither: leave accelerate_train_mode off here")) << avx2;
  EXPECT_EQ(avx2.find('\n'), std::string::npos) << "one line";
}

// Where the installed oneDNN runs float16 matmuls natively, fast's float16 phase is not
// widened and nothing needs saying; fast1's note does not depend on it.
TEST(AccelerateHardware, FastSaysNothingWhereOneDnnHasFloat16Kernels) {
  EXPECT_EQ(accelerate_hardware_note(AccelerateTrainMode::parse("fast|step|0.9"), cpu(true, true, true), true), "");
  EXPECT_NE(accelerate_hardware_note(AccelerateTrainMode::parse("fast1|step|0.9"), cpu(false, false, false), true), "");
}

}  // namespace
}  // namespace kiln
