// Every refusal of the compile cache's loader, each on its own: symlinks at every level,
// a foreign owner, writable metadata, an object for another code ABI, an object that passes
// its checksum but does not load. A refused entry is never run: the graph is compiled
// again (a miss) or the cache is not used (off), and the note says why.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "backend/cpu/run/abi.h"
#include "backend/cpu/build/toolchain.h"
#include "cache/store.h"
#include "kiln/backend/compiler.h"
#include "support/cache_entries.h"
#include "support/small_graph.h"
#include "support/temp_files.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using testkit::small_graph;

CompileReport compile_with(const fs::path& dir) {
  CompileReport r;
  const CompileOptions o{.cache = {.dir = dir.string()}};
  auto exe = compile_cpu(small_graph(), o, &r);
  testkit::expect_small_graph_result(*exe);  // whatever the cache did, the result is right
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A cache with one entry for small_graph(); returns the entry's key.
std::string filled(const fs::path& dir) {
  const CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  return r.cache_key;
}

// Replaces an entry's object and fixes its metadata; only loading can tell.
void replace_object(const fs::path& dir, const std::string& key, const std::string& bytes) {
  ::testkit::replace_entry_object(dir, key, bytes);
  ASSERT_EQ(cache::Store(dir.string()).check(key).state, cache::EntryCheck::State::ok)
      << "the fix-up must pass the store's checks";
}

TEST(CacheRefusals, ASymlinkedCacheRootIsNotUsedWithOrWithoutATrailingSlash) {
  const fs::path real = ::testkit::fresh_dir("refuse-root-real"), linked = ::testkit::fresh_dir("refuse-root-linked");
  filled(real);
  fs::create_directory_symlink(real, linked);
  for (const std::string& given : {linked.string(), linked.string() + "/"}) {
    const CompileReport r = compile_with(given);
    EXPECT_EQ(r.cache, CacheOutcome::off) << given;
    EXPECT_TRUE(has(r.cache_note, "symlink")) << given << ": " << r.cache_note;
  }
  fs::remove(linked);
  EXPECT_EQ(compile_with(real).cache, CacheOutcome::hit) << "the real directory is untouched";
  fs::remove_all(real);
}

TEST(CacheRefusals, ASymlinkedPrefixDirectoryIsNotLoadedThrough) {
  const fs::path dir = ::testkit::fresh_dir("refuse-prefix"), elsewhere = ::testkit::fresh_dir("refuse-prefix-away");
  const std::string key = filled(dir);
  const fs::path prefix = dir / key.substr(0, 2);
  fs::rename(prefix, elsewhere);
  fs::create_directory_symlink(elsewhere, prefix);
  const CompileReport r = compile_with(dir);
  EXPECT_NE(r.cache, CacheOutcome::hit);
  EXPECT_TRUE(has(r.cache_note, "symlink")) << r.cache_note;
  EXPECT_TRUE(fs::exists(elsewhere / key / "step.so")) << "nothing deleted through the linked";
  fs::remove_all(dir);
  fs::remove_all(elsewhere);
}

TEST(CacheRefusals, ASymlinkedObjectOrMetadataFileIsAMiss) {
  for (const char* file : {cache::kObjectFile, cache::kMetaFile}) {
    const fs::path dir = ::testkit::fresh_dir("refuse-file"), away = ::testkit::fresh_dir("refuse-file-away");
    const std::string key = filled(dir);
    const fs::path target = fs::path(cache::Store(dir.string()).entry_dir(key)) / file;
    fs::create_directories(away);
    fs::copy_file(target, away / file);
    fs::remove(target);
    fs::create_symlink(away / file, target);
    const CompileReport r = compile_with(dir);
    EXPECT_EQ(r.cache, CacheOutcome::miss) << file << ": " << r.cache_note;
    EXPECT_TRUE(has(r.cache_note, "symlink")) << file << ": " << r.cache_note;
    EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit) << file << ": the entry was replaced";
    EXPECT_TRUE(fs::exists(away / file)) << "the linked's target is not deleted";
    fs::remove_all(dir);
    fs::remove_all(away);
  }
}

TEST(CacheRefusals, WritableMetadataIsAMiss) {
  const fs::path dir = ::testkit::fresh_dir("refuse-meta-writable");
  const std::string key = filled(dir);
  const fs::path meta = fs::path(cache::Store(dir.string()).entry_dir(key)) / cache::kMetaFile;
  fs::permissions(meta, fs::perms::group_write, fs::perm_options::add);
  const CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_TRUE(has(r.cache_note, "writable by group or others")) << r.cache_note;
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);
  fs::remove_all(dir);
}

TEST(CacheRefusals, AnObjectForAnotherCodeAbiIsAMiss) {
  const fs::path dir = ::testkit::fresh_dir("refuse-abi"), build = ::testkit::fresh_dir("refuse-abi-build");
  const std::string key = filled(dir);
  fs::create_directories(build);
  std::ofstream(build / "step.cpp") << "extern \"C\" int kiln_abi_version() { return " << cpu::kAbiVersion + 1
                                    << "; }\nextern \"C\" void kiln_step(const void*, void*, void**) {}\n";
  cpu::compile_shared_object(cpu::host_toolchain(), (build / "step.cpp").string(), (build / "step.so").string());
  replace_object(dir, key, ::testkit::read_file(build / "step.so"));
  const CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_TRUE(has(r.cache_note, "ABI " + std::to_string(cpu::kAbiVersion + 1))) << r.cache_note;
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);
  fs::remove_all(dir);
  fs::remove_all(build);
}

TEST(CacheRefusals, AnObjectThatPassesItsChecksumButDoesNotLoadIsAMiss) {
  const fs::path dir = ::testkit::fresh_dir("refuse-unloadable");
  const std::string key = filled(dir);
  replace_object(dir, key, std::string(4096, '\x7f'));
  const CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_TRUE(has(r.cache_note, "not loaded")) << r.cache_note;
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::hit);
  fs::remove_all(dir);
}

TEST(CacheRefusals, ACacheRootOwnedByAnotherUserIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "a directory owned by another user can only be made as root";
  const fs::path dir = ::testkit::fresh_dir("refuse-foreign-root");
  filled(dir);
  ASSERT_EQ(::lchown(dir.c_str(), 65534, 65534), 0);
  const CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::off);
  EXPECT_TRUE(has(r.cache_note, "owned by uid 65534")) << r.cache_note;
  fs::remove_all(dir);
}

TEST(CacheRefusals, AnEntryOwnedByAnotherUserIsNeverLoadedNorReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "an entry owned by another user can only be made as root";
  const fs::path dir = ::testkit::fresh_dir("refuse-foreign-entry");
  const fs::path e = cache::Store(dir.string()).entry_dir(filled(dir));
  for (const auto& p : fs::recursive_directory_iterator(e)) ASSERT_EQ(::lchown(p.path().c_str(), 65534, 65534), 0);
  ASSERT_EQ(::lchown(e.c_str(), 65534, 65534), 0);
  const CompileReport r = compile_with(dir);
  EXPECT_EQ(r.cache, CacheOutcome::miss);
  EXPECT_TRUE(has(r.cache_note, "owned by uid 65534")) << r.cache_note;
  EXPECT_TRUE(has(r.cache_note, "not ours")) << r.cache_note;
  EXPECT_EQ(compile_with(dir).cache, CacheOutcome::miss) << "still foreign: never loaded";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
