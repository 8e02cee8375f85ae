// The generated code cut into translation units compiled side by side (codegen.h,
// GeneratedSource::units; CompileOptions::compile_jobs): every kernel in exactly one
// unit, the entry point in the first, the same bits whatever the cut, and a prelude that
// includes no standard header (parsing them was most of a cold compile).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/codegen/codegen.h"
#include "kiln/backend/compiler.h"
#include "kiln/base/error.h"
#include "passes/passes.h"
#include "support/generated_code.h"
#include "support/test_arrays.h"
#include "support/training_graphs.h"

namespace kiln {
namespace {

using testkit::generated;
using testkit::occurrences;

Graph mlp_training_step() { return testkit::mlp_training_step(4); }

TEST(CompileUnits, EveryKernelIsInExactlyOneUnitAndTheEntryInTheFirst) {
  const cpu::GeneratedSource src = generated(mlp_training_step());
  ASSERT_GE(src.kernels.size(), 4u);
  EXPECT_EQ(src.units(1, "// extra\n"), std::vector<std::string>{src.text() + "// extra\n"});
  for (int n : {2, 3, 1000}) {
    const std::vector<std::string> units = src.units(n, "// extra\n");
    EXPECT_EQ(units.size(), std::min<size_t>(n, src.kernels.size() + 1));
    EXPECT_EQ(units, src.units(n, "// extra\n")) << "the cut depends only on the code and n";
    for (size_t u = 0; u < units.size(); ++u) {
      EXPECT_EQ(occurrences(units[u], "kiln_step("), u == 0 ? 1 : 0) << "unit " << u;
      EXPECT_EQ(occurrences(units[u], "// extra\n"), u == 0 ? 1 : 0) << "unit " << u;
      EXPECT_NE(units[u].find("__attribute__((visibility(\"hidden\")))"), std::string::npos) << "unit " << u;
    }
    for (size_t k = 0; k < src.kernels.size(); ++k) {
      int found = 0;
      for (const auto& u : units) found += occurrences(u, src.kernels[k]);
      EXPECT_EQ(found, 1) << "kernel " << k << " with n = " << n;
    }
  }
  EXPECT_EQ(src.units(0, "").size(), 1u);
}

TEST(CompileUnits, TheGeneratedCodeIncludesNoHeaderWithoutPooling) {
  const cpu::GeneratedSource src = generated(mlp_training_step());
  EXPECT_FALSE(src.pool);
  EXPECT_EQ(src.text().find("#include"), std::string::npos) << src.text().substr(0, 3000);
}

// Bit for bit: the cut moves functions between files, never changes what they compute.
TEST(CompileUnits, OneUnitOrSeveralTrainTheSameBits) {
  const Graph g = mlp_training_step();
  testkit::TestRng rng(5);
  Feeds feeds;
  feeds["features"] = testkit::uniform_array(rng, {4, 784}, 0, 1);
  Array labels(DType::i32, {4});
  for (int64_t i = 0; i < 4; ++i) labels.set(i, double(i * 3 % 10));
  feeds["labels"] = labels;
  std::vector<std::string> results;
  for (int jobs : {1, 2, 3}) {
    CompileReport report;
    const auto exe = compile_cpu(g, CompileOptions{.compile_jobs = jobs}, &report);
    EXPECT_EQ(report.compile_units, jobs);
    Variables vars;
    initialize_variables(g, vars);
    std::string bits;
    for (int step = 0; step < 2; ++step) {
      const Array loss = exe->run(feeds, vars).at("loss");
      bits += std::string(reinterpret_cast<const char*>(loss.bytes()), loss.nbytes());
    }
    for (const auto& [name, value] : vars) bits += name + std::string(reinterpret_cast<const char*>(value.bytes()), value.nbytes());
    results.push_back(bits);
  }
  EXPECT_TRUE(results[0] == results[1]) << "1 unit vs 2";
  EXPECT_TRUE(results[0] == results[2]) << "1 unit vs 3";
}

TEST(CompileUnits, ANegativeJobCountIsRefusedNamingTheOption) {
  try {
    compile_cpu(mlp_training_step(), CompileOptions{.compile_jobs = -1});
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[compile_jobs] -1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
