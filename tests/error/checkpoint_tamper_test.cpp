// Issue 19: checkpoints as a hostile or careless user leaves them, through the real `kiln`
// process. A hand-edited manifest with a recomputed checksum (a number where a string
// belongs, a negative or huge shape, a step the global_step variable contradicts), a
// checkpoint name on a directory, a FIFO or a link to /dev/zero: each exits 2 at once with
// a message naming the file and what is wrong; none aborts, hangs or exhausts memory, and
// nothing in the model directory is changed.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;

const std::string kRun = "train --backend interp --train-limit 64 --test-limit 64 --batch-size 32 --quiet --log-every 0 ";
const std::string kCkpt1 = "ckpt-000000000001.kiln";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Rewrites a checkpoint's manifest (and data) with `edit`, then recomputes its checksum, as
// someone who read the format would.
void tamper(const fs::path& file, const std::function<void(nlohmann::json&, std::string&)>& edit) {
  const std::string bytes = slurp(file);
  uint64_t mlen = 0;
  std::memcpy(&mlen, bytes.data() + 12, 8);
  nlohmann::json manifest = nlohmann::json::parse(bytes.substr(20, mlen));
  std::string data = bytes.substr(20 + mlen, bytes.size() - 16 - 20 - mlen);
  edit(manifest, data);
  const std::string text = manifest.dump();
  std::string out = bytes.substr(0, 12);
  const uint64_t n = text.size();
  out.append(reinterpret_cast<const char*>(&n), 8);
  out += text + data;
  const XXH128_hash_t h = XXH3_128bits(out.data(), out.size());
  out.append(reinterpret_cast<const char*>(&h.low64), 8);
  out.append(reinterpret_cast<const char*>(&h.high64), 8);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << out;
}

nlohmann::json& variable(nlohmann::json& m, const std::string& name) {
  for (auto& v : m["variables"])
    if (v["name"] == name) return v;
  throw std::runtime_error("no variable " + name);
}

class CheckpointTamper : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testkit::have_data()) return;
    origin_ = testkit::fresh_dir("ckpt-origin");
    const Result r = testkit::run_kiln(kRun + "--steps 1 --model-dir " + origin_.string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  static void TearDownTestSuite() { fs::remove_all(origin_); }
  void SetUp() override {
    if (!testkit::have_data()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    dir_ = testkit::fresh_dir(std::string("ckpt-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    fs::copy_file(origin_ / kCkpt1, dir_ / kCkpt1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Resumes in dir_ (under a time limit: a hang is a failure, not a stuck suite) and checks
  // the clean refusal: exit 2, every `says`, the directory as it was.
  void expect_refused(const std::vector<std::string>& says, const std::string& extra = "") {
    std::map<std::string, std::string> before;
    for (const auto& e : fs::directory_iterator(dir_))
      before[e.path().filename().string()] = e.is_regular_file() && !e.is_symlink() ? slurp(e.path()) : "";
    const Result r = testkit::run_command("timeout 120 " + std::string(KILN_BINARY) + " " + kRun + "--steps 3 " +
                                          extra + " --model-dir " + dir_.string() + " 2>&1");
    EXPECT_EQ(r.status, 2) << r.output;
    for (const auto& s : says) EXPECT_TRUE(contains(r.output, s)) << "expected '" << s << "' in\n" << r.output;
    EXPECT_FALSE(contains(r.output, "terminate called")) << r.output;
    std::map<std::string, std::string> after;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename() != ".kiln-lock")
        after[e.path().filename().string()] = e.is_regular_file() && !e.is_symlink() ? slurp(e.path()) : "";
    EXPECT_EQ(before, after) << "the refused run changed the model directory";
  }

  static fs::path origin_;
  fs::path dir_;
};
fs::path CheckpointTamper::origin_;

TEST_F(CheckpointTamper, ANumberWhereAStringBelongs) {
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { variable(m, "dense0/kernel")["dtype"] = 7; });
  expect_refused({"[checkpoint]", kCkpt1, "'dtype' is missing or not a string"});
}

TEST_F(CheckpointTamper, AStepThatIsAString) {
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { m["global_step"] = "1"; });
  expect_refused({"[checkpoint]", "'global_step' is \"1\", not an integer"});
}

TEST_F(CheckpointTamper, ANegativeShape) {
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { variable(m, "dense0/kernel")["shape"] = {-784, -1024}; });
  expect_refused({"[checkpoint]", "variable 'dense0/kernel'", "not a size"});
}

TEST_F(CheckpointTamper, AHugeShapeIsNotAllocated) {
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) {
    variable(m, "dense0/kernel")["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
    variable(m, "dense0/kernel")["bytes"] = int64_t{1} << 62;
  });
  expect_refused({"[checkpoint]", "variable 'dense0/kernel'"});
}

TEST_F(CheckpointTamper, TheManifestStepAndTheGlobalStepVariableDisagree) {
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { m["global_step"] = 2; });
  fs::rename(dir_ / kCkpt1, dir_ / "ckpt-000000000002.kiln");
  expect_refused({"[checkpoint]", "the manifest says step 2 but variable 'global_step' holds 1"});
}

TEST_F(CheckpointTamper, AnAcceleratePhaseThatIsANumber) {
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) {
    m["state"] = {{"phase", 5}, {"accelerate_train_mode", "fast1|step|0.9"}};
  });
  expect_refused({"[checkpoint]", "'phase'"}, "--accelerate-train-mode 'fast1|step|0.9'");
}

TEST_F(CheckpointTamper, ADirectoryNamedLikeACheckpoint) {
  fs::create_directories(dir_ / "ckpt-000000000099.kiln");
  expect_refused({"ckpt-000000000099.kiln", "is not a regular file"});
}

TEST_F(CheckpointTamper, ALinkToDevZero) {
  fs::create_symlink("/dev/zero", dir_ / "ckpt-000000000005.kiln");
  expect_refused({"ckpt-000000000005.kiln", "is not a regular file"});
}

TEST_F(CheckpointTamper, AFifo) {
  ASSERT_EQ(::mkfifo((dir_ / "ckpt-000000000005.kiln").c_str(), 0600), 0);
  expect_refused({"ckpt-000000000005.kiln", "is not a regular file"});
}

}  // namespace
