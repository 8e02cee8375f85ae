// CPU feature detection with forced feature sets: the /proc/cpuinfo texts of the three
// kinds of machine kiln meets (Intel with AMX, AMD Zen 4 with AVX512-BF16, AVX2 only),
// and this machine's own detection agreeing with its /proc/cpuinfo.
#include "kiln/backend/cpu_features.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace kiln {
namespace {

CpuFeatures parse(const std::string& flags, const std::string& model = "Test CPU") {
  std::istringstream text("processor\t: 0\nvendor_id\t: Test\nmodel name\t: " + model + "\nflags\t\t: " + flags +
                          "\n\nprocessor\t: 1\nflags\t\t: avx512f avx512_bf16 amx_bf16\n");
  return cpu_features_from(text);
}

TEST(CpuFeatures, IntelWithAmx) {
  const CpuFeatures c = parse("fpu sse2 avx2 f16c avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_int8",
                              "Intel(R) Xeon(R) Platinum 8488C");
  EXPECT_EQ(c.model, "Intel(R) Xeon(R) Platinum 8488C");
  EXPECT_TRUE(c.amx_bf16 && c.avx512_bf16 && c.avx512_fp16 && c.avx512f && c.avx2 && c.f16c);
  EXPECT_EQ(c.isa(), "avx2 f16c avx512f avx512_bf16 avx512_fp16 amx_bf16");
  EXPECT_FALSE(c.amx_fp16);
}

// Granite Rapids adds AMX-FP16: the one feature that multiplies float16 faster than float32.
TEST(CpuFeatures, IntelWithAmxFp16) {
  const CpuFeatures c = parse("avx2 f16c avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile amx_fp16");
  EXPECT_TRUE(c.amx_fp16 && c.amx_bf16);
  EXPECT_EQ(c.isa(), "avx2 f16c avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_fp16");
}

TEST(CpuFeatures, Zen4WithAvx512Bf16Only) {
  const CpuFeatures c = parse("fpu sse2 avx2 f16c avx512f avx512bw avx512_bf16 avx512_vnni", "AMD EPYC 9R14");
  EXPECT_TRUE(c.avx512_bf16 && c.avx512f);
  EXPECT_FALSE(c.amx_bf16);
  EXPECT_FALSE(c.avx512_fp16);
  EXPECT_EQ(c.isa(), "avx2 f16c avx512f avx512_bf16");
}

// Only the first processor's flags count (the second one in the text claims AMX), and a
// flag is a whole word: "avx512fx" is not avx512f.
TEST(CpuFeatures, Avx2OnlyAndWholeWordsOfTheFirstProcessor) {
  const CpuFeatures c = parse("fpu sse2 avx2 f16c avx512fx", "AMD EPYC 7B13");
  EXPECT_TRUE(c.avx2 && c.f16c);
  EXPECT_FALSE(c.avx512f || c.avx512_bf16 || c.amx_bf16);
  EXPECT_EQ(c.isa(), "avx2 f16c");
}

TEST(CpuFeatures, NoFlagsIsBaseline) {
  std::istringstream empty("");
  EXPECT_EQ(cpu_features_from(empty).isa(), "baseline x86-64");
  EXPECT_EQ(cpu_features_from(empty).model, "");
}

TEST(CpuFeatures, ThisMachineMatchesItsCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  if (!in) GTEST_SKIP() << "no /proc/cpuinfo";
  const CpuFeatures parsed = cpu_features_from(in);
  EXPECT_EQ(cpu_features().isa(), parsed.isa());
  EXPECT_EQ(cpu_features().model, parsed.model);
  EXPECT_GE(cpu_features().cores, 1);
}

}  // namespace
}  // namespace kiln
