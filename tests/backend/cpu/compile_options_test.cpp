// CompileOptions dumps, what happens without a working host compiler, and which of the
// option and the environment gives the compiler.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/backend/backend.h"
#include "kiln/backend/compiler.h"
#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/text.h"
#include "support/small_graph.h"
#include "support/test_arrays.h"
#include "support/temp_files.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) { return ::testkit::fresh_dir("compile-" + name); }
std::string read(const fs::path& p) { return ::testkit::read_file(p); }

using testkit::expect_small_graph_result;
using testkit::small_graph;

// The one entry of a directory (what a single compile dumped there).
fs::path only_entry(const fs::path& dir) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
  EXPECT_EQ(entries.size(), 1u) << dir;
  return entries.empty() ? dir / "missing" : entries.front();
}

TEST(CompileOptions, DumpIrAndCodeDirectories) {
  const fs::path ir_dir = fresh_dir("ir"), code_dir = fresh_dir("code");
  CompileReport report;
  auto exe = compile_cpu(small_graph(),
                         CompileOptions{.policy = PrecisionPolicy::mixed_bfloat16,
                                        .dump_ir_dir = ir_dir.string(),
                                        .dump_code_dir = code_dir.string(),
                                        .name = "train"},
                         &report);
  expect_small_graph_result(*exe);
  const fs::path graph_ir = only_entry(ir_dir);
  EXPECT_EQ(graph_ir.filename().string().rfind("train-", 0), 0u) << graph_ir;
  EXPECT_EQ(graph_ir.filename().string().size(), 6u + 32u) << "name-<32 hex key>: " << graph_ir;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(graph_ir)) {
    ++files;
    EXPECT_NO_THROW(parse_graph(read(e.path()))) << e.path();
  }
  EXPECT_EQ(files, 11u) << "input + one file per pass (precision, simplify, cse, transposes, epilogues, "
                           "float16_in_float32, relu_masks, dce, all_reduce_buckets, all_reduce_readers)";
  EXPECT_NE(read(graph_ir / "1-precision.kir").find("bf16"), std::string::npos);
  const fs::path code = only_entry(code_dir);
  EXPECT_EQ(code.filename().string(), graph_ir.filename().string() + ".cpp");
  const std::string source = read(code);
  EXPECT_NE(source.find("kiln_step"), std::string::npos);
  EXPECT_NE(source.find("kiln_abi_version"), std::string::npos);
  EXPECT_GT(report.compile_seconds, 0);
  EXPECT_FALSE(report.compiler.empty());
  EXPECT_EQ(report.library_calls, 1);
  fs::remove_all(ir_dir);
  fs::remove_all(code_dir);
}

// Every compiled graph gets its own dump, also when it comes from the cache, and a second
// graph never overwrites the first one's.
TEST(CompileOptions, DumpsAreOnePerGraphAndWrittenOnACacheHit) {
  const fs::path ir_dir = fresh_dir("ir-many"), code_dir = fresh_dir("code-many"), cache = fresh_dir("dump-cache");
  const CompileOptions o{.cache = {.dir = cache.string()}, .dump_ir_dir = ir_dir.string(), .dump_code_dir = code_dir.string()};
  CompileReport a, b, hit;
  compile_cpu(small_graph(3), o, &a);
  compile_cpu(small_graph(4), o, &b);
  ASSERT_NE(a.cache_key, b.cache_key);
  EXPECT_TRUE(fs::exists(ir_dir / ("graph-" + a.cache_key) / "8-dce.kir"));
  EXPECT_TRUE(fs::exists(ir_dir / ("graph-" + b.cache_key) / "8-dce.kir"));
  EXPECT_TRUE(fs::exists(code_dir / ("graph-" + a.cache_key + ".cpp")));
  EXPECT_TRUE(fs::exists(code_dir / ("graph-" + b.cache_key + ".cpp")));
  fs::remove_all(ir_dir);
  fs::remove_all(code_dir);
  compile_cpu(small_graph(3), o, &hit);
  EXPECT_EQ(hit.cache, CacheOutcome::hit);
  EXPECT_TRUE(fs::exists(ir_dir / ("graph-" + a.cache_key) / "0-input.kir"));
  EXPECT_NE(read(code_dir / ("graph-" + a.cache_key + ".cpp")).find("kiln_step"), std::string::npos);
  for (const auto& d : {ir_dir, code_dir, cache}) fs::remove_all(d);
}

// The bucket size changes the compiled step (one MPI call or several), so it changes the
// cache key: through the generated source, which the key covers. (world_size 1: a graph
// this process can build; the pass buckets it as it would a job's.)
TEST(CompileOptions, TheAllReduceBucketSizeIsInTheCacheKey) {
  Graph g;
  const Tensor a = placeholder(g, "a", DType::f32, {64});
  const Tensor b = placeholder(g, "b", DType::f32, {32});
  g.add_output("ra", (all_reduce(a, 1) * 0.5).id());
  g.add_output("rb", (all_reduce(b, 1) * 0.5).id());
  const fs::path cache = fresh_dir("bucket-cache");
  CompileReport per_gradient, bucketed;
  compile_cpu(g, {.cache = {.dir = cache.string()}, .all_reduce_bucket_bytes = 0}, &per_gradient);
  compile_cpu(g, {.cache = {.dir = cache.string()}}, &bucketed);
  EXPECT_EQ(per_gradient.fallback_ops, 2);  // two MPI calls
  EXPECT_EQ(bucketed.fallback_ops, 1);      // one
  EXPECT_EQ(bucketed.cache, CacheOutcome::miss);
  EXPECT_NE(per_gradient.cache_key, bucketed.cache_key);
  fs::remove_all(cache);
}

// An unwritable dump directory is the user's error, said clearly: not a crash, and not a
// silent fallback to the interpreter.
TEST(CompileOptions, AnUnwritableDumpDirectoryIsAConfigError) {
  const fs::path file = fresh_dir("dump-file") / "a-file";
  fs::create_directories(file.parent_path());
  { std::ofstream(file) << "x"; }
  ASSERT_TRUE(fs::is_regular_file(file));
  for (bool code : {false, true}) {
    CompileOptions o;
    (code ? o.dump_code_dir : o.dump_ir_dir) = (file / "sub").string();
    try {
      compile_cpu(small_graph(), o);
      ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(code ? "[KILN_DUMP_CODE]" : "[KILN_DUMP_IR]"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    }
  }
  fs::remove_all(file.parent_path());
}

// profile: the executable times its steps and prints the table (by step, then by kind and
// op) when it goes; without it, nothing is printed.
TEST(CompileOptions, ProfileRowsLimitTheTable) {
  ::testing::internal::CaptureStderr();
  {
    auto exe = compile_cpu(small_graph(), CompileOptions{.profile = true, .profile_rows = 1});
    expect_small_graph_result(*exe);
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  // Of 2 steps, one row each: title, header, 1 step, "by kind and op:", header, 1 group.
  size_t lines = 0;
  for (char c : err) lines += c == '\n';
  EXPECT_EQ(lines, 6u) << err;
}

TEST(CompileOptions, ProfilePrintsAStepTableWhenTheExecutableGoes) {
  for (bool profile : {false, true}) {
    ::testing::internal::CaptureStderr();
    {
      auto exe = compile_cpu(small_graph(), CompileOptions{.profile = profile});
      expect_small_graph_result(*exe);
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("kiln profile:") != std::string::npos, profile) << err;
    if (profile) {
      EXPECT_NE(err.find("1 runs"), std::string::npos) << err;
      // The same time grouped by kind and op, each group with its count of steps.
      EXPECT_NE(err.find("by kind and op:"), std::string::npos) << err;
      EXPECT_NE(err.find(" steps)\n"), std::string::npos) << err;
    }
  }
}

// The environment's defaults are taken at the edge, never inside compile_cpu.
TEST(CompileOptions, EnvironmentDefaultsFillOnlyWhatIsUnset) {
  ::setenv("KILN_DUMP_IR", "/env/ir", 1);
  ::setenv("KILN_DUMP_CODE", "/env/code", 1);
  ::setenv("KILN_PROFILE", "1", 1);
  const CompileOptions filled = with_environment_defaults({});
  const CompileOptions kept = with_environment_defaults({.dump_ir_dir = "mine"});
  ::setenv("KILN_PROFILE", "200", 1);
  const CompileOptions rows = with_environment_defaults({});
  ::setenv("KILN_PROFILE", "yes", 1);
  std::string word_error;
  try {
    with_environment_defaults({});
  } catch (const ConfigError& e) {
    word_error = e.what();
  }
  ::setenv("KILN_PROFILE", "0", 1);
  const CompileOptions zero = with_environment_defaults({});
  ::unsetenv("KILN_DUMP_IR");
  ::unsetenv("KILN_DUMP_CODE");
  ::unsetenv("KILN_PROFILE");
  EXPECT_EQ(filled.dump_ir_dir, "/env/ir");
  EXPECT_EQ(filled.dump_code_dir, "/env/code");
  EXPECT_TRUE(filled.profile);
  EXPECT_EQ(filled.profile_rows, 25);
  EXPECT_TRUE(rows.profile);
  EXPECT_EQ(rows.profile_rows, 200);  // KILN_PROFILE=N: N rows
  // Not a number: an error naming the variable and what is valid (kiln/base/settings.h).
  EXPECT_NE(word_error.find("[KILN_PROFILE] 'yes' is not valid: give an integer from 0 to 100000"),
            std::string::npos) << word_error;
  EXPECT_EQ(kept.dump_ir_dir, "mine");
  EXPECT_FALSE(zero.profile);
}

// The compiler is an option (CompileOptions::compiler; KILN_CXX fills it at the edge), so a
// broken one is tried in this process: each command is probed once, whatever ran before.
BackendOptions with_compiler(const std::string& cxx) {
  BackendOptions opts;
  opts.backend = Backend::cpu;
  opts.compile.compiler = cxx;
  return opts;
}

TEST(CompilerFallback, MissingCompilerFallsBackToTheInterpreterWithAWarning) {
  testing::internal::CaptureStderr();
  auto exe = make_executable(small_graph(), with_compiler("/nonexistent/c++"));  // warns and falls back
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(exe);
  expect_small_graph_result(*exe);
  EXPECT_NE(err.find("warning"), std::string::npos) << err;
  EXPECT_NE(err.find("/nonexistent/c++"), std::string::npos) << "the warning names the compiler: " << err;
  EXPECT_NE(err.find("interpreter"), std::string::npos) << err;
  try {
    compile_cpu(small_graph(), {.compiler = "/nonexistent/c++"});
    ADD_FAILURE() << "compile_cpu should throw SystemError";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/c++"), std::string::npos) << e.what();
  }
}

TEST(CompilerFallback, FailingCompilerIsReportedWithItsOwnMessage) {
  const fs::path dir = fresh_dir("fakecxx");
  fs::create_directories(dir);
  const fs::path fake = dir / "fake-cxx";
  {
    std::ofstream s(fake);
    s << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fake-cxx 1.0'; exit 0; fi\n"
         "echo 'fake-cxx: internal error 4242' >&2\nexit 3\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  testing::internal::CaptureStderr();
  auto exe = make_executable(small_graph(), with_compiler(fake.string()));
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(exe);
  expect_small_graph_result(*exe);
  EXPECT_NE(err.find("fake-cxx: internal error 4242"), std::string::npos) << "the compiler's own message: " << err;
  EXPECT_NE(err.find("interpreter"), std::string::npos) << err;
  EXPECT_THROW(compile_cpu(small_graph(), {.compiler = fake.string()}), SystemError);
  fs::remove_all(dir);
}

// Flag or config > environment > default, for the compiler as for every setting.
TEST(CompileOptionsEnvironment, TheCompilerComesFromTheOptionThenKilnCxx) {
  ::setenv("KILN_CXX", "/from/the/environment", 1);
  ::setenv("KILN_CXX_TIMEOUT", "12.5", 1);
  const CompileOptions from_env = with_environment_defaults({});
  const CompileOptions given = with_environment_defaults({.compiler = "g++", .compiler_timeout_seconds = 3});
  ::unsetenv("KILN_CXX");
  ::unsetenv("KILN_CXX_TIMEOUT");
  EXPECT_EQ(from_env.compiler, "/from/the/environment");
  EXPECT_EQ(from_env.compiler_timeout_seconds, 12.5);
  EXPECT_EQ(given.compiler, "g++");
  EXPECT_EQ(given.compiler_timeout_seconds, 3);
  const CompileOptions neither = with_environment_defaults({});
  EXPECT_EQ(neither.compiler, "");  // compile_cpu runs "c++"
  EXPECT_EQ(neither.compiler_timeout_seconds, 0);  // 600 s
}

TEST(CompileOptionsEnvironment, ABadTimeoutNamesItsVariable) {
  ::setenv("KILN_CXX_TIMEOUT", "soon", 1);
  try {
    with_environment_defaults({});
    ADD_FAILURE() << "KILN_CXX_TIMEOUT=soon is accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[KILN_CXX_TIMEOUT]", 0), 0u) << e.what();
  }
  ::unsetenv("KILN_CXX_TIMEOUT");
  EXPECT_THROW(compile_cpu(small_graph(), {.compiler_timeout_seconds = -1}), ConfigError);
}

}  // namespace
}  // namespace kiln
