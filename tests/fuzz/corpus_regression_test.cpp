// Every file of the fuzz corpus (fuzz/corpus/<target>/: the seeds, and the inputs of
// crashes the fuzzers found, kept after the fix) through its target in this build, with
// gcc and without libFuzzer: the regression tests of the fuzzers, run everywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "targets.h"

namespace {
namespace fs = std::filesystem;

class FuzzCorpus : public ::testing::TestWithParam<kiln::fuzz::NamedTarget> {};

TEST_P(FuzzCorpus, EveryFileIsReadOrRejectedCleanly) {
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "fuzz" / "corpus" / GetParam().name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing: every target has a seed corpus";
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string bytes = s.str();
    SCOPED_TRACE(e.path().string());
    EXPECT_EQ(GetParam().run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
    ++files;
  }
  EXPECT_GT(files, 0) << dir << " is empty";
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(kiln::fuzz::all_targets()),
                         [](const ::testing::TestParamInfo<kiln::fuzz::NamedTarget>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
