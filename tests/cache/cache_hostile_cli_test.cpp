// Issue 19, `kiln cache` and the cache root as a hostile user leaves them, through the real
// `kiln` process: metadata with times no calendar holds and counts that are not counts
// (list/verify/stats print them as unknown, never crash or print a negative count), and a
// symlinked cache root given with a trailing '/' (which makes lstat follow the link):
// refused like the link itself, by a compile and by clear.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"
#include "support/dir_test.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;
using testkit::run_kiln;

const std::string kKey = "00112233445566778899aabbccddeeff";

class CacheHostile : public testkit::DirTest {
 protected:
  void SetUp() override {
    DirTest::SetUp();
    root_ = dir_ / "cache";
    fs::create_directories(root_ / "00" / kKey);
    std::ofstream(root_ / ".kiln-cache") << R"({"format": "kiln-compile-cache", "version": 1})" << "\n";
    std::ofstream(root_ / "00" / kKey / "step.so") << "object";
    for (const auto& e : fs::recursive_directory_iterator(dir_)) ::chmod(e.path().c_str(), e.is_directory() ? 0700 : 0600);
    ::chmod(dir_.c_str(), 0700);
  }
  void meta(const std::string& fields) {
    std::ofstream(root_ / "00" / kKey / "meta.json") << R"({"key": ")" << kKey << R"(", )" << fields << "}\n";
    ::chmod((root_ / "00" / kKey / "meta.json").c_str(), 0600);
  }
  fs::path root_;
};

TEST_F(CacheHostile, TimesAndCountsOutOfRangeAreShownAsUnknown) {
  // An unknown last_used falls back to the entry directory's time; created has none.
  const std::string cases[] = {
      R"("created": 1e300, "last_used": 9.9e307, "hits": 1e30)",
      R"("created": -1e300, "last_used": -9e18, "hits": -5)",
      R"("created": "yesterday", "last_used": [1], "hits": 18446744073709551615)",
      R"("created": 67767976233316800, "last_used": 67767976233316800, "hits": 3.5, "seconds": {"codegen": -1e308})",
  };
  for (const auto& fields : cases) {
    meta(fields);
    for (const std::string action : {"list", "verify", "stats", "list --json", "verify --json", "stats --json"}) {
      const Result r = run_kiln("cache " + action + " --dir " + root_.string());
      EXPECT_TRUE(r.status == 0 || (action.rfind("verify", 0) == 0 && r.status == 1)) << fields << " " << action
                                                                                        << "\n" << r.output;
      EXPECT_FALSE(contains(r.output, "hits -")) << fields << " " << action << "\n" << r.output;
      EXPECT_FALSE(contains(r.output, "\"hits\":-")) << fields << " " << action << "\n" << r.output;
      EXPECT_FALSE(contains(r.output, "; -")) << fields << " " << action << "\n" << r.output;
    }
    const Result list = run_kiln("cache list --dir " + root_.string());
    EXPECT_TRUE(contains(list.output, "hits 0")) << fields << "\n" << list.output;
    EXPECT_TRUE(contains(list.output, "created ?")) << fields << "\n" << list.output;
  }
}

TEST_F(CacheHostile, ASymlinkedRootWithATrailingSlashIsRefused) {
  fs::create_symlink(root_, dir_ / "link");
  const std::string link_slash = (dir_ / "link").string() + "/";
  const Result clear = run_kiln("cache clear --dir " + link_slash);
  EXPECT_EQ(clear.status, 2) << clear.output;
  EXPECT_TRUE(contains(clear.output, "is a symlink")) << clear.output;
  EXPECT_TRUE(fs::exists(root_ / "00" / kKey / "step.so"));

  if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const Result train = run_kiln("train --backend cpu --steps 1 --train-limit 64 --test-limit 64 --batch-size 32 --quiet "
                                "--cache-strict --graph-compiler-cache-dir " + link_slash);
  EXPECT_EQ(train.status, 2) << train.output;
  EXPECT_TRUE(contains(train.output, "is a symlink")) << train.output;
}

}  // namespace
