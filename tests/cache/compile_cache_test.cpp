// The compile cache through compile_cpu: hits, misses, damage, unsafe directories,
// concurrency across processes and eviction. Child processes are this test binary again,
// filtered to a DISABLED_ test (the toolchain is detected once per process).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cache/lock.h"
#include "cache/store.h"
#include "kiln/backend/compiler.h"
#include "kiln/train/config.h"
#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "support/small_graph.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kiln-cache-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using testkit::expect_small_graph_result;
using testkit::small_graph;

CompileReport compile_with(const fs::path& dir, const Graph& g = small_graph(),
                           PrecisionPolicy policy = PrecisionPolicy::original, int64_t cap = int64_t{2} << 30,
                           bool strict = false) {
  CompileOptions o;
  o.policy = policy;
  o.cache.dir = dir.string();
  o.cache.size_cap_bytes = cap;
  o.cache.strict = strict;
  CompileReport r;
  auto exe = compile_cpu(g, o, &r);
  if (g.node(g.outputs()[0].value).shape == Shape{2, 2} && g.find("x") && g.node(*g.find("x")).shape == Shape{2, 3})
    expect_small_graph_result(*exe);
  return r;
}

std::string entry_dir(const fs::path& dir, const std::string& key) {
  return cache::Store(dir.string()).entry_dir(key);
}

TEST(CompileCache, OffByDefault) {
  CompileReport r;
  auto exe = compile_cpu(small_graph(), {}, &r);
  EXPECT_EQ(r.cache, CacheOutcome::off);
  EXPECT_TRUE(r.cache_key.empty());
}

TEST(CompileCache, SecondCompileHitsAndSkipsTheCompiler) {
  const fs::path dir = fresh_dir("hit") / "nested" / "cache";
  const CompileReport miss = compile_with(dir);
  EXPECT_EQ(miss.cache, CacheOutcome::miss);
  EXPECT_GT(miss.compile_seconds, 0);
  EXPECT_EQ((fs::status(dir).permissions() & fs::perms::all), fs::perms::owner_all) << "created 0700";
  const std::string e = entry_dir(dir, miss.cache_key);
  EXPECT_TRUE(fs::is_regular_file(e + "/step.so"));
  const auto meta = nlohmann::json::parse(read(e + "/meta.json"));
  EXPECT_EQ(meta["key"], miss.cache_key);
  EXPECT_EQ(meta["kiln_version"], KILN_VERSION);
  EXPECT_TRUE(meta["ingredients"].contains("compiler_identity"));
  EXPECT_TRUE(meta["seconds"].contains("compile"));
  EXPECT_GT(meta["sizes"]["object"].get<int64_t>(), 0);

  const CompileReport hit = compile_with(dir);
  EXPECT_EQ(hit.cache, CacheOutcome::hit);
  EXPECT_EQ(hit.cache_key, miss.cache_key);
  EXPECT_EQ(hit.compile_seconds, 0);
  // Codegen still runs (the generated source is part of the key); the C++ compile does not.
  EXPECT_GT(hit.codegen_seconds, 0);
  EXPECT_EQ(meta["ingredients"]["source"], nlohmann::json::parse(read(e + "/meta.json"))["ingredients"]["source"]);
  EXPECT_EQ(nlohmann::json::parse(read(e + "/meta.json"))["hits"], 1);
  // A renamed-but-equal graph is the same entry.
  EXPECT_EQ(compile_with(dir, small_graph(3, "renamed")).cache, CacheOutcome::hit);
  fs::remove_all(fresh_dir("hit"));
}

TEST(CompileCache, ChangedGraphOrPolicyMissesAndIsStoredBeside) {
  const fs::path dir = fresh_dir("beside");
  const CompileReport a = compile_with(dir);
  const CompileReport b = compile_with(dir, small_graph(5));
  const CompileReport c = compile_with(dir, small_graph(), PrecisionPolicy::mixed_bfloat16);
  EXPECT_EQ(b.cache, CacheOutcome::miss);
  EXPECT_EQ(c.cache, CacheOutcome::miss);
  EXPECT_NE(a.cache_key, b.cache_key);
  EXPECT_NE(a.cache_key, c.cache_key);
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 3u);
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);
  EXPECT_EQ(compile_with(dir, small_graph(5)).cache, CacheOutcome::hit);
  fs::remove_all(dir);
}

// A learning-rate sweep: graphs that differ only in a hyperparameter's value (kiln/ir/ops.h)
// share one entry, and each executable computes with its own graph's value, which the
// generated source does not hold.
TEST(CompileCache, GraphsDifferingOnlyInHyperparametersShareAnEntry) {
  const fs::path dir = fresh_dir("hyper"), code = fresh_dir("hyper-code");
  auto graph = [](double rate) {
    Graph g;
    const Tensor x = placeholder(g, "x", DType::f32, {5});
    g.add_output("y", (x * hyperparameter(g, rate) + 1.0).id());
    return g;
  };
  Feeds feeds;
  feeds["x"] = Array(DType::f32, {5});
  for (int64_t i = 0; i < 5; ++i) feeds["x"].set(i, double(i) - 2);
  std::string first_key;
  for (double rate : {0.375, 0.8125, -3.0}) {
    CompileOptions o;
    o.cache.dir = dir.string();
    o.dump_code_dir = code.string();
    CompileReport r;
    auto exe = compile_cpu(graph(rate), o, &r);
    if (first_key.empty()) {
      EXPECT_EQ(r.cache, CacheOutcome::miss);
      first_key = r.cache_key;
    } else {
      EXPECT_EQ(r.cache, CacheOutcome::hit) << "rate " << rate;
      EXPECT_EQ(r.cache_key, first_key);
    }
    Variables vars;
    const Fetches out = exe->run(feeds, vars);
    for (int64_t i = 0; i < 5; ++i)
      EXPECT_EQ(out.at("y").get(i), static_cast<float>((double(i) - 2) * rate + 1)) << "rate " << rate << " at " << i;
  }
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 1u);
  // Generated code writes float constants as hex literals (loop_constant).
  auto literal = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%af", static_cast<float>(v));
    return std::string(buf);
  };
  auto sources = [&] {
    std::string all;
    for (const auto& e : fs::directory_iterator(code)) all += read(e.path());
    return all;
  };
  for (double rate : {0.375, 0.8125, -3.0}) EXPECT_EQ(sources().find(literal(rate)), std::string::npos) << rate;
  // A plain constant is code: its literal is in the source, and another value is another entry.
  fs::remove_all(code);
  CompileOptions o;
  o.cache.dir = dir.string();
  o.dump_code_dir = code.string();
  CompileReport r;
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {5});
  g.add_output("y", (x * 0.375 + 1.0).id());
  compile_cpu(g, o, &r);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_NE(sources().find(literal(0.375)), std::string::npos);
  fs::remove_all(dir);
  fs::remove_all(code);
}

// Each kind of damage: the next compile misses (with a warning), succeeds, and repairs it.
TEST(CompileCache, DamagedEntriesAreMissesAndRepaired) {
  const fs::path dir = fresh_dir("damage");
  const std::string key = compile_with(dir).cache_key;
  const std::string e = entry_dir(dir, key), so = e + "/step.so", meta = e + "/meta.json";
  const std::vector<std::pair<const char*, std::function<void()>>> damages = {
      {"truncated object", [&] { fs::resize_file(so, fs::file_size(so) / 2); }},
      {"flipped bytes", [&] {
         std::fstream f(so, std::ios::in | std::ios::out | std::ios::binary);
         f.seekp(1000);
         f.put('\x5a');
         f.put('\xa5');
       }},
      {"empty object", [&] { std::ofstream(so, std::ios::trunc); }},
      {"missing metadata", [&] { fs::remove(meta); }},
      {"garbled metadata", [&] { std::ofstream(meta, std::ios::trunc) << "{\"key\": "; }},
      {"directory instead of object", [&] {
         fs::remove(so);
         fs::create_directory(so);
       }},
  };
  for (const auto& [what, damage] : damages) {
    damage();
    const CompileReport r = compile_with(dir);
    EXPECT_EQ(r.cache, CacheOutcome::miss) << what;
    EXPECT_NE(r.cache_note.find("not loaded"), std::string::npos) << what << ": " << r.cache_note;
    EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit) << what << ": repaired";
  }
  fs::remove_all(dir);
}

TEST(CompileCache, UnsafeDirectoriesAndEntriesAreRefused) {
  const fs::path dir = fresh_dir("unsafe");
  const std::string key = compile_with(dir).cache_key;
  // A group-writable cache directory: nothing is loaded from it or stored in it.
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::add);
  CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::off);
  EXPECT_NE(r.cache_note.find("writable by group or others"), std::string::npos) << r.cache_note;
  EXPECT_THROW(compile_with(dir, small_graph(), PrecisionPolicy::original, int64_t{2} << 30, true), ConfigError);
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::remove);
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);

  // A group-writable entry: refused, then replaced (it is ours).
  const std::string e = entry_dir(dir, key);
  fs::permissions(e + "/step.so", fs::perms::others_write, fs::perm_options::add);
  r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_NE(r.cache_note.find("writable by group or others"), std::string::npos) << r.cache_note;
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);

  // A symlinked entry (pointing at a valid copy elsewhere): refused and replaced.
  const fs::path elsewhere = fresh_dir("unsafe-elsewhere");
  fs::create_directories(elsewhere);
  fs::copy(e, elsewhere / "entry");
  fs::remove_all(e);
  fs::create_directory_symlink(elsewhere / "entry", e);
  r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_NE(r.cache_note.find("symlink"), std::string::npos) << r.cache_note;
  EXPECT_FALSE(fs::is_symlink(e));
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);
  fs::remove_all(elsewhere);
  fs::remove_all(dir);
}

TEST(CompileCache, UncreatableDirectoryWarnsAndCompilesUnlessStrict) {
  const fs::path file = fresh_dir("notadir");
  std::ofstream(file) << "x";
  const CompileReport r = compile_with(file / "cache");
  EXPECT_EQ(r.cache, CacheOutcome::off);
  EXPECT_NE(r.cache_note.find("cannot create"), std::string::npos) << r.cache_note;
  try {
    compile_with(file / "cache", small_graph(), PrecisionPolicy::original, int64_t{2} << 30, true);
    ADD_FAILURE() << "strict mode must fail";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[graph_compiler_cache_dir] cannot create"), std::string::npos) << e.what();
  }
  fs::remove(file);
}

TEST(CompileCache, EvictionKeepsTheTotalUnderTheCapLeastRecentlyUsedFirst) {
  const fs::path dir = fresh_dir("evict");
  const std::string k3 = compile_with(dir, small_graph(3)).cache_key;
  const int64_t one = cache::Store(dir.string()).total_bytes();
  const std::string k4 = compile_with(dir, small_graph(4)).cache_key;
  EXPECT_EQ(compile_with(dir, small_graph(3)).cache, CacheOutcome::hit);  // 3 is now more recent than 4
  // Room for two entries: storing a third evicts 4, the least recently used.
  const CompileReport r5 = compile_with(dir, small_graph(5), PrecisionPolicy::original, one * 5 / 2);
  cache::Store store(dir.string());
  EXPECT_LE(store.total_bytes(), one * 5 / 2);
  std::set<std::string> keys;
  for (const auto& e : store.scan()) keys.insert(e.key);
  EXPECT_EQ(keys, (std::set<std::string>{k3, r5.cache_key}));
  (void)k4;
  fs::remove_all(dir);
}

// --- across processes -------------------------------------------------------------

std::string self_exe() { return fs::read_symlink("/proc/self/exe").string(); }

std::string child_command(const fs::path& dir, const std::string& env = "") {
  return env + " KILN_TEST_CACHE_DIR='" + dir.string() + "' '" + self_exe() +
         "' --gtest_also_run_disabled_tests --gtest_filter='CompileCacheChild.DISABLED_Compile' 2>&1";
}

std::string run(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

int count(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t i = s.find(part); i != std::string::npos; i = s.find(part, i + 1)) ++n;
  return n;
}

TEST(CompileCacheChild, DISABLED_Compile) {
  const char* dir = std::getenv("KILN_TEST_CACHE_DIR");
  ASSERT_NE(dir, nullptr);
  // As a front end does: the compiler from KILN_CXX, resolved at the edge.
  CompileOptions o = with_environment_defaults({});
  o.cache.dir = dir;
  CompileReport r;
  expect_small_graph_result(*compile_cpu(small_graph(), o, &r));
  std::printf("cache=%s key=%s\n", cache_outcome_name(r.cache).data(), r.cache_key.c_str());
}

TEST(CompileCache, SeveralProcessesCompileOnceAndAllSucceed) {
  const fs::path dir = fresh_dir("concurrent");
  std::string cmd = "(";
  for (int i = 0; i < 4; ++i) cmd += child_command(dir) + " & ";
  cmd += "wait)";
  const std::string out = run(cmd);
  EXPECT_EQ(count(out, "[  PASSED  ] 1 test"), 4) << out;
  EXPECT_EQ(count(out, "cache=miss"), 1) << "compiled once:\n" << out;
  EXPECT_EQ(count(out, "cache=hit"), 3) << out;
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 1u);
  fs::remove_all(dir);
}

TEST(CompileCache, AnotherCompilerIdentityMisses) {
  const fs::path dir = fresh_dir("identity");
  EXPECT_NE(run(child_command(dir)).find("cache=miss"), std::string::npos);
  EXPECT_NE(run(child_command(dir)).find("cache=hit"), std::string::npos);
  // The same compiler behind a wrapper that reports another version.
  const fs::path wrapper = fresh_dir("identity-cxx");
  {
    std::ofstream s(wrapper);
    s << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'wrapped-c++ 99.0'; exit 0; fi\nexec c++ \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  const std::string out = run(child_command(dir, "KILN_CXX='" + wrapper.string() + "'"));
  EXPECT_NE(out.find("cache=miss"), std::string::npos) << out;
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 2u);
  fs::remove_all(dir);
  fs::remove(wrapper);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A process killed by SIGKILL at any point of a store leaves no entry that loads; the
// next compile misses, stores normally, and then hits.
TEST(CompileCache, KilledStoreLeavesNothingLoadable) {
  for (const char* point : {"staging", "before_rename"}) {
    const fs::path dir = fresh_dir(std::string("crash-") + point);
    const std::string out = run(child_command(dir, std::string("KILN_CACHE_FAILPOINT=") + point));
    EXPECT_EQ(out.find("[  PASSED  ]"), std::string::npos) << point << ": the child was killed\n" << out;
    EXPECT_TRUE(cache::Store(dir.string()).scan().empty()) << point;
    EXPECT_FALSE(fs::is_empty(dir / "tmp")) << point << ": the staging directory is left behind";
    EXPECT_NE(run(child_command(dir)).find("cache=miss"), std::string::npos) << point;
    EXPECT_NE(run(child_command(dir)).find("cache=hit"), std::string::npos) << point;
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// KILN_CACHE_DIR is read at the edge (with_environment_defaults, RunConfig's
// cache_settings), never inside compile_cpu: options given in code mean what they say.
TEST(CompileCache, KilnCacheDirEnvironmentVariableEnablesItAtTheEdge) {
  const fs::path dir = fresh_dir("env");
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  CompileReport a, b, c;
  compile_cpu(small_graph(), with_environment_defaults({}), &a);
  compile_cpu(small_graph(), with_environment_defaults({}), &b);
  compile_cpu(small_graph(), {}, &c);
  const CacheSettings from_config = ExperimentalConfig{}.cache_settings();
  const CacheSettings given = ExperimentalConfig{.graph_compiler_cache_dir = "/elsewhere"}.cache_settings();
  ::unsetenv("KILN_CACHE_DIR");
  EXPECT_EQ(a.cache, CacheOutcome::miss);
  EXPECT_EQ(b.cache, CacheOutcome::hit);
  EXPECT_EQ(c.cache, CacheOutcome::off);
  EXPECT_EQ(from_config.dir, dir.string());
  EXPECT_EQ(given.dir, "/elsewhere");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// While another process holds a key's lock (compiling it), a compile of that key waits;
// after the timeout it compiles privately and stores nothing, and still succeeds.
TEST(CompileCache, LockTimeoutCompilesPrivately) {
  const fs::path dir = fresh_dir("locktimeout");
  const std::string key = compile_with(dir).cache_key;
  cache::Store store(dir.string());
  ASSERT_TRUE(store.remove(key));
  cache::KeyLock held(store.lock_path(key));
  ASSERT_TRUE(held.try_acquire());
  CompileOptions o;
  o.cache.dir = dir.string();
  o.cache.lock_timeout_seconds = 0.3;
  CompileReport r;
  auto exe = compile_cpu(small_graph(), o, &r);
  expect_small_graph_result(*exe);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_NE(r.cache_note.find("timed out"), std::string::npos) << r.cache_note;
  EXPECT_TRUE(store.scan().empty()) << "a private compile does not store";
  held.release();
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::miss);
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
