// Issues 19 and 30: checkpoints as a hostile or careless user leaves them, through the real
// `kiln` process. In TensorFlow's format (what kiln writes): a flipped data byte, a
// truncated or missing shard, a kiln state that contradicts the bundle, a checkpoint name on
// a directory. In kiln's older single-file format (still resumed): a hand-edited manifest
// with a recomputed checksum (a number where a string belongs, a negative or huge shape, a
// step the global_step variable contradicts), a name on a directory, a FIFO or a link to
// /dev/zero. Each exits 2 at once with a message naming the file and what is wrong; none
// aborts, hangs or exhausts memory, and nothing in the model directory is changed.
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

#include "formats/tensor_bundle.h"
#include "kiln/train/checkpoint.h"
#include "support/run_kiln.h"
#include "support/temp_files.h"

namespace {
namespace fs = std::filesystem;
using testkit::contains;
using testkit::Result;

const std::string kRun = "train --backend interp --train-limit 64 --test-limit 64 --batch-size 32 --quiet --log-every 0 ";
const std::string kCkpt1 = "ckpt-000000000001.kiln";  // the older format
const std::string kTf1 = "model.ckpt-1";

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
    for (const auto& e : fs::directory_iterator(origin_))
      if (e.is_regular_file() && e.path().filename() != ".kiln-lock") fs::copy_file(e.path(), dir_ / e.path().filename());
  }
  // The run's checkpoint in kiln's older format instead (as an earlier kiln left it).
  void to_legacy() {
    kiln::write_checkpoint((dir_ / kCkpt1).string(), kiln::read_tf_checkpoint((dir_ / kTf1).string()));
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().rfind("model.ckpt-", 0) == 0 || e.path().filename() == "checkpoint")
        fs::remove(e.path());
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

TEST_F(CheckpointTamper, LegacyANumberWhereAStringBelongs) {
  to_legacy();
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { variable(m, "dense0/kernel")["dtype"] = 7; });
  expect_refused({"[checkpoint]", kCkpt1, "'dtype' is missing or not a string"});
}

TEST_F(CheckpointTamper, LegacyAStepThatIsAString) {
  to_legacy();
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { m["global_step"] = "1"; });
  expect_refused({"[checkpoint]", "'global_step' is \"1\", not an integer"});
}

TEST_F(CheckpointTamper, LegacyANegativeShape) {
  to_legacy();
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { variable(m, "dense0/kernel")["shape"] = {-784, -1024}; });
  expect_refused({"[checkpoint]", "variable 'dense0/kernel'", "not a size"});
}

TEST_F(CheckpointTamper, LegacyAHugeShapeIsNotAllocated) {
  to_legacy();
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) {
    variable(m, "dense0/kernel")["shape"] = {int64_t{1} << 40, int64_t{1} << 40};
    variable(m, "dense0/kernel")["bytes"] = int64_t{1} << 62;
  });
  expect_refused({"[checkpoint]", "variable 'dense0/kernel'"});
}

TEST_F(CheckpointTamper, LegacyTheManifestStepAndTheGlobalStepVariableDisagree) {
  to_legacy();
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) { m["global_step"] = 2; });
  fs::rename(dir_ / kCkpt1, dir_ / "ckpt-000000000002.kiln");
  expect_refused({"[checkpoint]", "the manifest says step 2 but variable 'global_step' holds 1"});
}

TEST_F(CheckpointTamper, LegacyAnAcceleratePhaseThatIsANumber) {
  to_legacy();
  tamper(dir_ / kCkpt1, [](nlohmann::json& m, std::string&) {
    m["state"] = {{"phase", 5}, {"accelerate_train_mode", "fast1|step|0.9"}};
  });
  expect_refused({"[checkpoint]", "'phase'"}, "--accelerate-train-mode 'fast1|step|0.9'");
}

TEST_F(CheckpointTamper, LegacyADirectoryNamedLikeACheckpoint) {
  to_legacy();
  fs::create_directories(dir_ / "ckpt-000000000099.kiln");
  expect_refused({"ckpt-000000000099.kiln", "is not a regular file"});
}

TEST_F(CheckpointTamper, LegacyALinkToDevZero) {
  to_legacy();
  fs::create_symlink("/dev/zero", dir_ / "ckpt-000000000005.kiln");
  expect_refused({"ckpt-000000000005.kiln", "is not a regular file"});
}

TEST_F(CheckpointTamper, LegacyAFifo) {
  to_legacy();
  ASSERT_EQ(::mkfifo((dir_ / "ckpt-000000000005.kiln").c_str(), 0600), 0);
  expect_refused({"ckpt-000000000005.kiln", "is not a regular file"});
}


// --- TensorFlow's format ---------------------------------------------------------------

void flip_byte(const fs::path& file, size_t at) {
  std::string b = slurp(file);
  b.at(at) = static_cast<char>(b[at] ^ 0x01);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << b;
}

void edit_state(const fs::path& file, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(slurp(file));
  edit(j);
  std::ofstream(file, std::ios::trunc) << j.dump();
}

TEST_F(CheckpointTamper, ResumesWhatItWrote) {
  EXPECT_TRUE(fs::exists(dir_ / (kTf1 + ".index")));
  EXPECT_TRUE(fs::exists(dir_ / (kTf1 + ".data-00000-of-00001")));
  EXPECT_EQ(slurp(dir_ / "checkpoint"), "model_checkpoint_path: \"model.ckpt-1\"\nall_model_checkpoint_paths: \"model.ckpt-1\"\n");
  const Result r = testkit::run_kiln(kRun + "--steps 2 --model-dir " + dir_.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "resumed at 1")) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "model.ckpt-2.index"));
  EXPECT_TRUE(contains(slurp(dir_ / "checkpoint"), "model_checkpoint_path: \"model.ckpt-2\"")) << slurp(dir_ / "checkpoint");
}

TEST_F(CheckpointTamper, AnOlderCheckpointStillResumes) {
  to_legacy();
  const Result r = testkit::run_kiln(kRun + "--steps 2 --model-dir " + dir_.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "resumed at 1")) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "model.ckpt-2.index")) << "the next save is in TensorFlow's format";
  EXPECT_TRUE(fs::exists(dir_ / kCkpt1)) << "the older file is kept (retention removes it in its turn)";
}

TEST_F(CheckpointTamper, AFlippedDataByte) {
  flip_byte(dir_ / (kTf1 + ".data-00000-of-00001"), 40);
  expect_refused({"[checkpoint]", kTf1 + ".data-00000-of-00001", "CRC-32C does not match"});
}

TEST_F(CheckpointTamper, ATruncatedShard) {
  const fs::path data = dir_ / (kTf1 + ".data-00000-of-00001");
  fs::resize_file(data, fs::file_size(data) / 2);
  expect_refused({"[checkpoint]", kTf1 + ".data-00000-of-00001", "truncated"});
}

TEST_F(CheckpointTamper, AFlippedIndexByte) {
  flip_byte(dir_ / (kTf1 + ".index"), 5);
  expect_refused({"[checkpoint]", kTf1 + ".index"});
}

TEST_F(CheckpointTamper, AStateThatContradictsTheBundle) {
  edit_state(dir_ / (kTf1 + ".kiln-state.json"), [](nlohmann::json& j) { j["global_step"] = 9; });
  expect_refused({"[checkpoint]", "holds global_step 1 but its kiln state says step 9"});
}

TEST_F(CheckpointTamper, AStateThatIsNotJson) {
  std::ofstream(dir_ / (kTf1 + ".kiln-state.json"), std::ios::trunc) << "{\"global_step\": [";
  expect_refused({"[checkpoint]", kTf1 + ".kiln-state.json"});
}

TEST_F(CheckpointTamper, APhaseThatIsANumberInTheState) {
  edit_state(dir_ / (kTf1 + ".kiln-state.json"), [](nlohmann::json& j) {
    j["state"] = {{"phase", 5}, {"accelerate_train_mode", "fast1|step|0.9"}};
  });
  expect_refused({"[checkpoint]", "'phase'"}, "--accelerate-train-mode 'fast1|step|0.9'");
}

TEST_F(CheckpointTamper, ADirectoryNamedLikeAnIndex) {
  fs::create_directories(dir_ / "model.ckpt-99.index");
  expect_refused({"model.ckpt-99.index", "is not a regular file"});
}

TEST_F(CheckpointTamper, ACheckpointOfAnotherModel) {
  auto vars = kiln::formats::read_bundle((dir_ / kTf1).string());
  vars["dense0/kernel"] = kiln::Array(kiln::DType::f32, {784, 7});
  kiln::formats::write_bundle((dir_ / kTf1).string(), vars);
  expect_refused({"[checkpoint]", "dense0/kernel"});
}

}  // namespace
