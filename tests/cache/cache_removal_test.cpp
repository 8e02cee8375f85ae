// `kiln cache clear|prune` and the store's own clean-up delete only what kiln can prove is
// its own (issue 19): a directory without kiln's marker is refused, symlinks are never
// followed, look-alike entries and foreign files are kept and reported, and an unsafe root
// is refused as a compile would refuse to load from it. Entries are made by compiling in
// this process; clear and prune run as the real `kiln` command.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "cache/layout.h"
#include "cache/store.h"
#include "kiln/backend/compiler.h"
#include "support/processes.h"
#include "support/run_kiln.h"
#include "support/small_graph.h"
#include "support/temp_files.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testkit::contains;
using ::testkit::Result;
using ::testkit::run_kiln;

const std::string kKeyA = "ab" + std::string(30, '1');  // a name shaped like a key

CompileReport compile_into(const fs::path& dir, int64_t width = 3) {
  CompileOptions o;
  o.cache.dir = dir.string();
  CompileReport r;
  compile_cpu(testkit::small_graph(width), o, &r);
  return r;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

void make_old(const fs::path& p) { fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(3)); }

// A directory tree of someone else's files, with names kiln might once have deleted: a
// tmp/ of old files and staging-like directories, and an entry-like directory with step.so
// and meta.json. Returns the files in it.
std::vector<fs::path> plant_victim(const fs::path& victim) {
  std::vector<fs::path> files = {victim / "tmp" / "notes.txt", victim / "tmp" / (kKeyA + ".abcdef") / "step.so",
                                 victim / "tmp" / ("kiln-1-" + kKeyA + ".abcdef") / "meta.json",
                                 victim / "ab" / kKeyA / "step.so", victim / "ab" / kKeyA / "meta.json",
                                 victim / "thesis.tex"};
  for (const auto& f : files) {
    write(f, "precious " + f.string());
    make_old(f);
  }
  for (const auto& d : fs::recursive_directory_iterator(victim))
    if (d.is_directory()) make_old(d.path());
  make_old(victim / "tmp");
  return files;
}

void expect_intact(const std::vector<fs::path>& files) {
  for (const auto& f : files) EXPECT_EQ(::testkit::read_file(f), "precious " + f.string()) << f;
}

TEST(CacheRemoval, ADirectoryWithoutTheMarkerIsRefusedAndKeepsEverything) {
  const fs::path dir = ::testkit::fresh_dir("cache-nomarker");
  const auto files = plant_victim(dir);
  for (const char* action : {"clear", "prune --max-size 1", "prune"}) {
    const Result r = run_kiln(std::string("cache ") + action + " --dir " + dir.string());
    EXPECT_EQ(r.status, 2) << action << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "nothing deleted")) << r.output;
    EXPECT_TRUE(contains(r.output, "has no marker (.kiln-cache)")) << r.output;
  }
  expect_intact(files);
  // A compile does not take it over either: it warns and compiles without the cache.
  const CompileReport c = compile_into(dir);
  EXPECT_EQ(c.cache, CacheOutcome::off);
  EXPECT_TRUE(contains(c.cache_note, "is not a kiln compile cache")) << c.cache_note;
  EXPECT_FALSE(fs::exists(dir / cache::kMarkerFile));
  expect_intact(files);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "tmp"), fs::directory_iterator()), 3) << "nothing added";
  fs::remove_all(dir);
}

// A prefix directory name other than the one of `key`, so planted names never meet it.
std::string other_prefix(const std::string& key, int n) {
  static const char* kChoices[] = {"ab", "cd", "ef", "a0", "b1"};
  std::vector<std::string> out;
  for (const char* c : kChoices)
    if (key.compare(0, 2, c) != 0) out.push_back(c);
  return out.at(static_cast<size_t>(n));
}

void make_private_dir(const fs::path& d) {
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all);
}

TEST(CacheRemoval, SymlinkedTmpPrefixAndEntryAreKeptWithTheirTargets) {
  const fs::path root = ::testkit::fresh_dir("cache-links"), dir = root / "cache", victim = root / "victim";
  const std::string key = compile_into(dir).cache_key;
  ASSERT_FALSE(key.empty());
  const std::string p1 = other_prefix(key, 0), p2 = other_prefix(key, 1), linked_key = p2 + std::string(30, '3');
  const auto files = plant_victim(victim);

  // tmp/ is a link to someone's directory: nothing in it is touched, and entries cannot be
  // removed (kiln removes an entry by moving it into tmp/ first), which is a failure.
  fs::remove_all(dir / "tmp");
  fs::create_directory_symlink(victim / "tmp", dir / "tmp");
  for (const char* action : {"prune --max-size 1", "clear"}) {
    const Result r = run_kiln(std::string("cache ") + action + " --dir " + dir.string());
    EXPECT_EQ(r.status, 1) << action << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, dir.string() + "/tmp: " + dir.string() + "/tmp is a symlink")) << r.output;
    EXPECT_TRUE(contains(r.output, "FAILED " + dir.string() + "/" + key.substr(0, 2) + "/" + key)) << r.output;
    expect_intact(files);
    EXPECT_TRUE(fs::is_symlink(dir / "tmp"));
  }
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 1u);
  fs::remove(dir / "tmp");
  make_private_dir(dir / "tmp");

  // A prefix directory and an entry that are links elsewhere: kept, with their targets.
  fs::create_directory_symlink(victim / "ab", dir / p1);
  make_private_dir(dir / p2);
  fs::create_directory_symlink(victim / "ab" / kKeyA, dir / p2 / linked_key);
  const Result p = run_kiln("cache prune --max-size 1 --dir " + dir.string());
  EXPECT_EQ(p.status, 0) << p.output;
  EXPECT_TRUE(contains(p.output, "evicted 1 entries")) << p.output;
  expect_intact(files);
  compile_into(dir);
  const Result c = run_kiln("cache clear --dir " + dir.string());
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_TRUE(contains(c.output, "removed 1 entries")) << c.output;
  EXPECT_TRUE(contains(c.output, dir.string() + "/" + p1 + ": " + dir.string() + "/" + p1 + " is a symlink")) << c.output;
  EXPECT_TRUE(contains(c.output, dir.string() + "/" + p2 + "/" + linked_key + ": " + dir.string() + "/" + p2 + "/" +
                                     linked_key + " is a symlink"))
      << c.output;
  expect_intact(files);
  EXPECT_TRUE(fs::is_symlink(dir / p1));
  EXPECT_TRUE(fs::is_symlink(dir / p2 / linked_key));
  fs::remove_all(root);
}

TEST(CacheRemoval, LookalikeEntriesAndForeignFilesAreReportedAndKept) {
  const fs::path dir = ::testkit::fresh_dir("cache-lookalike");
  const std::string key = compile_into(dir).cache_key;
  const std::string p = other_prefix(key, 0), a = p + std::string(30, '1'), b = p + std::string(30, '2');
  make_private_dir(dir / p);
  const std::vector<fs::path> files = {dir / p / a / "notes.txt", dir / p / b / "step.so",  dir / p / b / "diary.txt",
                                       dir / "README",           dir / "tmp" / "mine.txt", dir / p / "photos" / "cat.jpg"};
  for (const auto& f : files) {
    write(f, "precious " + f.string());
    make_old(f);
  }
  make_private_dir(dir / p / (p + std::string(30, '4')));  // empty: none of kiln's files

  const Result r = run_kiln("cache clear --dir " + dir.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "removed 1 entries")) << r.output;
  EXPECT_TRUE(contains(r.output, "holds 'notes.txt', which kiln does not create")) << r.output;
  EXPECT_TRUE(contains(r.output, "holds 'diary.txt', which kiln does not create")) << r.output;
  EXPECT_TRUE(contains(r.output, "holds none of kiln's files")) << r.output;
  EXPECT_TRUE(contains(r.output, dir.string() + "/README: not a name kiln creates")) << r.output;
  EXPECT_TRUE(contains(r.output, dir.string() + "/tmp/mine.txt: not a name kiln creates")) << r.output;
  EXPECT_TRUE(contains(r.output, dir.string() + "/" + p + "/photos: not a name kiln creates")) << r.output;
  expect_intact(files);
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 3u) << "only the look-alikes are left";
  fs::remove_all(dir);
}

TEST(CacheRemoval, AnUnsafeRootIsRefusedLikeACompileRefusesIt) {
  const fs::path dir = ::testkit::fresh_dir("cache-unsafe");
  compile_into(dir);
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::add);
  Result r = run_kiln("cache clear --dir " + dir.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "writable by group or others")) << r.output;
  EXPECT_TRUE(contains(r.output, "nothing deleted")) << r.output;
  EXPECT_EQ(cache::Store(dir.string()).scan().size(), 1u);
  fs::permissions(dir, fs::perms::group_write, fs::perm_options::remove);

  if (::geteuid() != 0) {
    fs::remove_all(dir);
    GTEST_SKIP() << "a directory owned by another user can only be made as root";
  }
  // An entry owned by another user inside a root of ours: kept and reported.
  const std::string e = cache::Store(dir.string()).scan().at(0).dir;
  for (const auto& p : fs::recursive_directory_iterator(e)) ASSERT_EQ(::lchown(p.path().c_str(), 65534, 65534), 0);
  ASSERT_EQ(::lchown(e.c_str(), 65534, 65534), 0);
  r = run_kiln("cache clear --dir " + dir.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, e + ": " + e + " is owned by uid 65534")) << r.output;
  EXPECT_TRUE(fs::exists(e + "/step.so"));
  // A root owned by another user: refused as a whole.
  ASSERT_EQ(::lchown(dir.c_str(), 65534, 65534), 0);
  for (const char* action : {"clear", "prune --max-size 1"}) {
    r = run_kiln(std::string("cache ") + action + " --dir " + dir.string());
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "is owned by uid 65534")) << r.output;
  }
  EXPECT_TRUE(fs::exists(e + "/step.so"));
  fs::remove_all(dir);
}

TEST(CacheRemoval, ACacheOfAnOlderKilnIsAdoptedByACompileThenCleared) {
  const fs::path dir = ::testkit::fresh_dir("cache-adopt");
  compile_into(dir);
  fs::remove(dir / cache::kMarkerFile);  // as kiln left caches before the marker
  // Its old-style staging directory, left by a killed store.
  write(dir / "tmp" / (std::string(32, 'e') + ".Ab3dEf") / "step.so", "partial");
  Result r = run_kiln("cache clear --dir " + dir.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(compile_into(dir).cache, CacheOutcome::hit) << "adopted: it holds only kiln's names";
  EXPECT_TRUE(fs::is_regular_file(dir / cache::kMarkerFile));
  r = run_kiln("cache clear --dir " + dir.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "removed 1 entries and 1 leftover staging directories")) << r.output;
  EXPECT_FALSE(contains(r.output, "kept")) << r.output;
  EXPECT_TRUE(fs::is_empty(dir / "tmp"));
  fs::remove_all(dir);
}

// After each store the store removes leftovers of dead processes, nothing else: not a
// live process's staging directory, not a foreign file in tmp/, however old.
TEST(CacheRemoval, TheStoreCleansOnlyStagingOfDeadProcesses) {
  const fs::path dir = ::testkit::fresh_dir("cache-staging");
  compile_into(dir, 3);
  const pid_t dead = ::testkit::dead_pid();
  const std::string key = std::string(32, 'f');
  const fs::path dead_staging = dir / "tmp" / ("kiln-" + std::to_string(dead) + "-" + key + ".abcDEF");
  const fs::path live_staging = dir / "tmp" / ("kiln-" + std::to_string(::getppid()) + "-" + key + ".abcDEF");
  const fs::path young_old_style = dir / "tmp" / (key + ".Young1");
  const fs::path foreign = dir / "tmp" / "backup.tar";
  for (const auto& p : {dead_staging / "step.so", live_staging / "step.so", young_old_style / "meta.json", foreign}) {
    write(p, "x");
    make_old(p);
  }
  make_old(live_staging);
  compile_into(dir, 4);  // a store, then its clean-up
  EXPECT_FALSE(fs::exists(dead_staging));
  EXPECT_TRUE(fs::exists(live_staging / "step.so"));
  EXPECT_TRUE(fs::exists(young_old_style / "meta.json"));
  EXPECT_TRUE(fs::exists(foreign));
  const Result r = run_kiln("cache prune --dir " + dir.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "in use: process " + std::to_string(::getppid()))) << r.output;
  EXPECT_TRUE(contains(r.output, "backup.tar: not a name kiln creates")) << r.output;
  EXPECT_TRUE(fs::exists(young_old_style)) << "younger than an hour";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
