#include "kiln/train/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "formats/crc32c.h"
#include "formats/sstable.h"
#include "formats/tensor_bundle.h"
#include "kiln/ir/ops.h"
#include "support/as_nobody.h"
#include "support/processes.h"
#include "tf_bundle.pb.h"

namespace kiln {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("kiln-ckpt-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
};

Checkpoint sample(int64_t step) {
  Checkpoint c;
  c.step = step;
  c.variables["dense0/kernel"] = Array::from_floats(DType::f32, {2, 3}, std::vector<float>{1, -2, 3.5f, 0, 1e-30f, -0.f});
  c.variables["dense0/kernel/momentum"] = Array::from_floats(DType::f32, {2, 3}, std::vector<float>{6, 5, 4, 3, 2, 1});
  c.variables["half"] = Array::from_floats(DType::bf16, {2}, std::vector<float>{1.5f, -3});
  c.variables["global_step"] = Array::scalar(DType::i64, static_cast<double>(step));
  c.state = {{"phase", "original"}};
  return c;
}

TEST(Checkpoint, RoundTripIsBitwiseEqual) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string path = (d.path / "c.kiln").string();
  const Checkpoint c = sample(42);
  write_checkpoint(path, c);
  const Checkpoint r = read_checkpoint(path);
  EXPECT_EQ(r.step, 42);
  EXPECT_EQ(r.state, c.state);
  ASSERT_EQ(r.variables.size(), c.variables.size());
  for (const auto& [name, a] : c.variables) EXPECT_TRUE(r.variables.at(name).bitwise_equal(a)) << name;
  for (const auto& e : fs::directory_iterator(d.path)) EXPECT_EQ(e.path().filename(), "c.kiln");  // no temp left
}

TEST(Checkpoint, CorruptOrTruncatedFilesAreClearErrors) {
  TempDir d;
  fs::create_directories(d.path);
  const std::string path = (d.path / "c.kiln").string();
  write_checkpoint(path, sample(1));
  const auto size = fs::file_size(path);
  for (uintmax_t at : {uintmax_t{3}, uintmax_t{30}, size / 2, size - 1}) {
    write_checkpoint(path, sample(1));
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(at));
      char ch = 0;
      f.get(ch);
      f.seekp(static_cast<std::streamoff>(at));
      f.put(static_cast<char>(ch ^ 0x10));
    }
    try {
      read_checkpoint(path);
      FAIL() << "flipped byte " << at << " not detected";
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find("is corrupt"), std::string::npos) << e.what();
    }
  }
  write_checkpoint(path, sample(1));
  fs::resize_file(path, size - 5);
  EXPECT_THROW(read_checkpoint(path), CheckpointError);
  fs::resize_file(path, 3);
  EXPECT_THROW(read_checkpoint(path), CheckpointError);
  EXPECT_THROW(read_checkpoint((d.path / "missing.kiln").string()), CheckpointError);
}

// A TensorFlow checkpoint of a float64 variable: kiln holds no float64, so the tensor is
// not read, and a model variable of its name is told so, not "not in the checkpoint".
TEST(Checkpoint, ATensorOfADtypeKilnDoesNotHoldIsNamedWithItsDtype) {
  const TempDir d;
  fs::create_directories(d.path);
  const std::string prefix = (d.path / "model.ckpt-3").string();
  const std::string bytes(16, '\0');  // two doubles 0.0
  tensorflow::BundleEntryProto e;
  e.set_dtype(tensorflow::DT_DOUBLE);
  e.mutable_shape()->add_dim()->set_size(2);
  e.set_offset(0);
  e.set_size(16);
  e.set_crc32c(formats::mask_crc(formats::crc32c(bytes)));
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  std::ofstream(formats::bundle_index_file(prefix), std::ios::binary)
      << formats::write_table({{"", header.SerializeAsString()}, {"w", e.SerializeAsString()}});
  std::ofstream(formats::bundle_data_file(prefix), std::ios::binary) << bytes;

  const Checkpoint c = load_checkpoint(prefix);
  EXPECT_TRUE(c.variables.empty());
  ASSERT_EQ(c.unread.size(), 1u);
  EXPECT_EQ(c.unread.at("w"), "DT_DOUBLE");
  Graph g;
  variable(g, "w", DType::f32, {2});
  const auto bad = checkpoint_mismatches(g, c.variables, false, c.unread);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "'w' is f32[2] in the model but DT_DOUBLE in the checkpoint, a dtype kiln does not hold (it holds "
                    "f32, f16, bf16, i32, i64, bool and TensorFlow's 8/16-bit integers): save the variable as f32 in "
                    "TensorFlow, or read the checkpoint there");
  EXPECT_EQ(checkpoint_mismatches(g, c.variables)[0], "'w' f32[2] is in the model but not in the checkpoint");
}

TEST(Checkpoint, MismatchesListEveryDifference) {
  Graph g;
  variable(g, "dense0/kernel", DType::f32, {2, 4});
  variable(g, "dense0/bias", DType::f32, {4});
  global_step(g);
  const auto bad = checkpoint_mismatches(g, sample(1).variables);
  ASSERT_EQ(bad.size(), 4u);
  std::string all;
  for (const auto& b : bad) all += b + "\n";
  EXPECT_NE(all.find("'dense0/kernel' is f32[2,4] in the model but f32[2,3] in the checkpoint"), std::string::npos) << all;
  EXPECT_NE(all.find("'dense0/bias' f32[4] is in the model but not in the checkpoint"), std::string::npos) << all;
  EXPECT_NE(all.find("'half' bf16[2] is in the checkpoint but not in the model"), std::string::npos) << all;
  EXPECT_EQ(checkpoint_mismatches(g, sample(1).variables, true).size(), 2u);
}

TEST(CheckpointDir, KeepsTheNewestNAndIgnoresTemporaryFiles) {
  TempDir d;
  CheckpointDir dir(d.path.string(), 3);
  dir.prepare();
  EXPECT_FALSE(dir.load_latest().has_value());
  const pid_t dead = testkit::dead_pid();  // a run killed mid-write: its pid is gone
  std::ofstream(d.path / (".tmp-" + std::to_string(dead) + "-ckpt-000000000100.kiln")) << "partial";
  for (int64_t s : {5, 10, 15, 20, 25}) dir.save(sample(s));
  EXPECT_EQ(dir.steps(), (std::vector<int64_t>{15, 20, 25}));
  EXPECT_EQ(dir.load_latest()->step, 25);
  for (const auto& e : fs::directory_iterator(d.path))
    EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u) << e.path();
  CheckpointDir all(d.path.string(), 0);
  for (int64_t s : {30, 35, 40, 45}) all.save(sample(s));
  EXPECT_EQ(all.steps().size(), 7u);
}

// Issue 61, item 13: kill -9 in a save (before the index) or in a rotation (after the index)
// left model.ckpt-N.kiln-state.json and .data-* without their checkpoint, for good. The
// next run, once it holds the lock, removes them and nothing of a whole checkpoint.
TEST(CheckpointDir, TheNextRunRemovesWhatAKilledSaveOrRotationLeftWithoutItsIndex) {
  TempDir d;
  fs::create_directories(d.path);
  CheckpointDir unlocked(d.path.string(), 0);
  for (int64_t s : {5, 10, 15, 20}) unlocked.save(sample(s));
  const auto file = [&](int64_t step, const std::string& suffix) {
    return d.path / ("model.ckpt-" + std::to_string(step) + suffix);
  };
  const std::string data = ".data-00000-of-00001", state = ".kiln-state.json";
  fs::remove(file(5, ".index"));   // killed rotating 5 away: its index was removed first
  fs::remove(file(20, ".index"));  // killed saving 20: its state and data were written first
  std::ofstream(d.path / "model.ckpt-x.kiln-state.json") << "not a checkpoint's name";
  std::ofstream(d.path / "notes.txt") << "the user's";
  unlocked.save(sample(25));
  EXPECT_TRUE(fs::exists(file(20, state))) << "without the lock nothing is removed";

  CheckpointDir next(d.path.string(), 0);
  next.prepare();
  for (int64_t s : {5, 20})
    for (const std::string& suffix : {state, data}) EXPECT_FALSE(fs::exists(file(s, suffix))) << file(s, suffix);
  for (int64_t s : {10, 15, 25})
    for (const std::string& suffix : {std::string(".index"), state, data})
      EXPECT_TRUE(fs::exists(file(s, suffix))) << file(s, suffix);
  EXPECT_TRUE(fs::exists(d.path / "model.ckpt-x.kiln-state.json"));
  EXPECT_TRUE(fs::exists(d.path / "notes.txt"));
  EXPECT_TRUE(fs::exists(d.path / "checkpoint"));
  EXPECT_EQ(next.steps(), (std::vector<int64_t>{10, 15, 25}));
  const auto latest = next.load_latest();
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->step, 25);
  EXPECT_EQ(latest->state, sample(25).state);
}

// Root can write anywhere: as root (CI), the check runs as nobody in a child process.
TEST(CheckpointDir, UnwritableDirectoryIsACheckpointError) {
  TempDir d;
  fs::create_directories(d.path);
  fs::permissions(d.path, fs::perms::owner_read | fs::perms::owner_exec);
  const auto prepare = [&] {
    try {
      CheckpointDir(d.path.string(), 1).prepare();
      std::fprintf(stderr, "prepare() accepted an unwritable directory\n");
      return 1;
    } catch (const CheckpointError&) {
      return 0;
    }
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(prepare(), 0);
    return;
  }
  ASSERT_EQ(::chown(d.path.c_str(), testkit::kNobody, testkit::kNobody), 0);
  EXPECT_EQ(testkit::run_as_nobody(prepare), 0);
}

TEST(CheckpointDir, AFileWhereTheDirectoryShouldBeIsACheckpointError) {
  TempDir d;
  fs::create_directories(d.path);
  std::ofstream(d.path / "file") << "x";
  EXPECT_THROW(CheckpointDir((d.path / "file").string(), 1).prepare(), CheckpointError);
  EXPECT_THROW(CheckpointDir((d.path / "file" / "sub").string(), 1).prepare(), CheckpointError);
}

}  // namespace
}  // namespace kiln
