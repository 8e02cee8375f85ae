// Issue 19, the permission cases, through the real `kiln` process run as an unprivileged
// user (root ignores permissions): a data directory that cannot be searched, a metrics
// file in a directory that cannot be written (the error names the errno of that failure,
// not a stale one), a read-only compile cache that clear/prune cannot empty (exit 1, never
// "removed"), and a cache whose lock files cannot be created (said so, not a time-out).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/run_kiln.h"
#include "support/temp_files.h"
#include "support/unprivileged.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;

constexpr const char* kData = "/usr/share/datasets/fashion-mnist";
const std::string kShort = " --backend interp --steps 1 --train-limit 64 --test-limit 64 --batch-size 32 --quiet";

class AsUnprivileged : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto prefix = testkit::unprivileged_prefix();
    if (!prefix) GTEST_SKIP() << testkit::unprivileged_skip_reason();
    prefix_ = *prefix;
    dir_ = testkit::fresh_dir(std::string("perm-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all);  // others may enter: the user below works in here
  }
  void TearDown() override {
    if (dir_.empty()) return;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory() && !it->is_symlink()) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  Result kiln(const std::string& args) {
    return testkit::run_command(prefix_ + KILN_BINARY + " " + args + " 2>&1");
  }
  Result shell(const std::string& script) {
    return testkit::run_command(prefix_ + "/bin/sh -c '" + script + "' 2>&1");
  }
  std::string prefix_;
  fs::path dir_;
};

TEST_F(AsUnprivileged, DataDirectoryWithoutSearchPermissionExitsTwo) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path data = dir_ / "data";
  fs::create_directories(data);
  for (const auto& e : fs::directory_iterator(kData)) fs::create_symlink(e.path(), data / e.path().filename());
  testkit::give_to_unprivileged(dir_);
  ::chmod(data.c_str(), 0600);  // readable, not searchable
  for (const std::string extra : {"", " --dry-run"}) {
    const Result r = kiln("train --data " + data.string() + kShort + extra);
    EXPECT_EQ(r.status, 2) << extra << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "[--data]")) << r.output;
    EXPECT_TRUE(contains(r.output, data.string())) << r.output;
    EXPECT_TRUE(contains(r.output, "Permission denied")) << r.output;
    EXPECT_FALSE(contains(r.output, "terminate called")) << r.output;
  }
}

TEST_F(AsUnprivileged, MetricsFileInAnUnwritableDirectoryNamesTheRealError) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path locked = dir_ / "locked";
  fs::create_directories(locked);
  testkit::give_to_unprivileged(dir_);
  ::chmod(locked.c_str(), 0555);
  const Result r = kiln("train" + kShort + " --metrics-out " + (locked / "m.jsonl").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "[--metrics-out] cannot write")) << r.output;
  EXPECT_TRUE(contains(r.output, "Permission denied")) << r.output;
  EXPECT_FALSE(contains(r.output, "No such file")) << r.output;  // the errno of a later call
}

// A cache kiln made (marker, one entry), as the unprivileged user owns it.
fs::path fake_cache(const fs::path& dir) {
  const fs::path root = dir / "cache";
  const std::string key = "00112233445566778899aabbccddeeff";
  fs::create_directories(root / "00" / key);
  std::ofstream(root / ".kiln-cache") << R"({"format": "kiln-compile-cache", "version": 1})" << "\n";
  std::ofstream(root / "00" / key / "step.so") << "not really an object";
  std::ofstream(root / "00" / key / "meta.json") << R"({"key": ")" << key << R"(", "hits": 3})" << "\n";
  for (const auto& e : fs::recursive_directory_iterator(root))
    ::chmod(e.path().c_str(), e.is_directory() ? 0700 : 0600);
  ::chmod(root.c_str(), 0700);
  testkit::give_to_unprivileged(dir);
  return root;
}

TEST_F(AsUnprivileged, ClearAndPruneOfAReadOnlyCacheFailAndSaySo) {
  const fs::path root = fake_cache(dir_);
  ::chmod((root / "00").c_str(), 0500);
  ::chmod(root.c_str(), 0500);
  for (const std::string action : {"clear", "prune --max-size 0"}) {
    const Result r = kiln("cache " + action + " --dir " + root.string());
    EXPECT_EQ(r.status, 1) << action << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "FAILED")) << action << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "Permission denied")) << action << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "0 entries")) << action << "\n" << r.output;
  }
  EXPECT_TRUE(fs::exists(root / "00" / "00112233445566778899aabbccddeeff" / "step.so"));
}

TEST_F(AsUnprivileged, ALockFileThatCannotBeCreatedIsNotATimeOut) {
  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path root = fake_cache(dir_);
  // Every prefix directory exists and is read-only: no lock file can be created.
  char hex[3];
  for (int i = 0; i < 256; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", i);
    fs::create_directories(root / hex);
  }
  testkit::give_to_unprivileged(dir_);
  for (int i = 0; i < 256; ++i) {
    std::snprintf(hex, sizeof hex, "%02x", i);
    ::chmod((root / hex).c_str(), 0500);
  }
  const Result r = kiln("train --backend cpu --steps 1 --train-limit 64 --test-limit 64 --batch-size 32 --quiet "
                        "--graph-compiler-cache-dir " + root.string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot lock entry")) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot open the lock file")) << r.output;
  EXPECT_TRUE(contains(r.output, "Permission denied")) << r.output;
  EXPECT_FALSE(contains(r.output, "timed out")) << r.output;
}

}  // namespace
