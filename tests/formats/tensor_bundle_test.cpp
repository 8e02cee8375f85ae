// TensorFlow's checkpoint format against a checkpoint real TensorFlow wrote
// (fixtures/tf_checkpoint, by tf.compat.v1.train.Saver): kiln reads every tensor with its
// value, writes an index byte for byte as TensorFlow does, and refuses damage with an error
// naming the file and the tensor.
#include "formats/tensor_bundle.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "formats/fixture.h"
#include "formats/sstable.h"
#include "kiln/error.h"
#include "support/temp_files.h"

namespace kiln::formats {
namespace {
namespace fs = std::filesystem;

const std::string kPrefix = "model.ckpt-7";

std::string tf_prefix() { return testkit::tf_fixture("tf_checkpoint/" + kPrefix).string(); }

DType dtype_of(const std::string& numpy) {
  if (numpy == "float32") return DType::f32;
  if (numpy == "float16") return DType::f16;
  if (numpy == "int32") return DType::i32;
  if (numpy == "int64") return DType::i64;
  if (numpy == "bool") return DType::boolean;
  throw std::runtime_error("fixture dtype " + numpy);
}

TEST(TensorBundle, ReadsEveryTensorTensorFlowSaved) {
  const auto tensors = read_bundle(tf_prefix());
  const auto& want = testkit::tf_expected();
  size_t checked = 0;
  for (const auto& [name, w] : want.items()) {
    if (!w.is_object() || !w.contains("dtype")) continue;  // records, pipelines, images: not tensors
    ASSERT_TRUE(tensors.count(name)) << name;
    const Array& a = tensors.at(name);
    EXPECT_EQ(a.dtype(), dtype_of(w["dtype"])) << name;
    EXPECT_EQ(a.shape(), w["shape"].get<Shape>()) << name;
    ASSERT_EQ(a.numel(), static_cast<int64_t>(w["values"].size())) << name;
    for (int64_t i = 0; i < a.numel(); ++i) {
      const auto& v = w["values"][i];
      EXPECT_EQ(a.get(i), v.is_boolean() ? double(v.get<bool>()) : v.get<double>()) << name << "[" << i << "]";
    }
    ++checked;
  }
  EXPECT_EQ(checked, 10u);
  EXPECT_EQ(tensors.size(), checked);
  const auto listed = list_bundle(tf_prefix());
  ASSERT_EQ(listed.size(), checked);
  EXPECT_EQ(listed.front().name, "big");  // name order, as the index holds them
  EXPECT_EQ(listed.front().dtype, "i64");
  EXPECT_EQ(read_bundle(tf_prefix(), {"dense/bias"}).at("dense/bias").shape(), (Shape{4}));
  EXPECT_THROW(read_bundle(tf_prefix(), {"no/such"}), CheckpointError);
}

TEST(TensorBundle, WritesTheBytesTensorFlowWrites) {
  const fs::path d = testkit::fresh_dir("bundle-write");
  fs::create_directories(d);
  const std::string prefix = (d / kPrefix).string();
  write_bundle(prefix, read_bundle(tf_prefix()));
  EXPECT_EQ(testkit::slurp_file(bundle_data_file(prefix)), testkit::slurp_file(bundle_data_file(tf_prefix())));
  EXPECT_EQ(testkit::slurp_file(bundle_index_file(prefix)), testkit::slurp_file(bundle_index_file(tf_prefix())));
  // and the table layer alone rewrites TensorFlow's index from its own entries
  const std::string index = testkit::slurp_file(bundle_index_file(tf_prefix()));
  EXPECT_EQ(write_table(read_table(index, "fixture")), index);
  for (const auto& e : fs::directory_iterator(d)) EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u);
  fs::remove_all(d);
}

class DamagedBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testkit::fresh_dir(std::string("bundle-") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    for (const char* f : {".index", ".data-00000-of-00001"})
      fs::copy_file(tf_prefix() + f, dir_ / (kPrefix + f));
    prefix_ = (dir_ / kPrefix).string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void flip(const std::string& file, size_t at) {
    std::string b = testkit::slurp_file(file);
    b[at] = static_cast<char>(b[at] ^ 0x01);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << b;
  }
  void expect_error(const std::vector<std::string>& says) {
    try {
      read_bundle(prefix_);
      ADD_FAILURE() << "no error";
    } catch (const CheckpointError& e) {
      for (const auto& s : says) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << s << " in " << e.what();
    }
  }
  fs::path dir_;
  std::string prefix_;
};

TEST_F(DamagedBundle, AFlippedDataByteNamesTheTensor) {
  flip(bundle_data_file(prefix_), 0);  // the first tensor in the data file: "big"
  expect_error({"'big'", "CRC-32C does not match"});
}

TEST_F(DamagedBundle, ATruncatedShard) {
  fs::resize_file(bundle_data_file(prefix_), fs::file_size(bundle_data_file(prefix_)) - 3);
  expect_error({".data-00000-of-00001", "truncated"});
}

TEST_F(DamagedBundle, AMissingShard) {
  fs::remove(bundle_data_file(prefix_));
  expect_error({".data-00000-of-00001", "does not exist"});
}

TEST_F(DamagedBundle, EveryFlippedIndexByteIsNoticed) {
  const std::string index = bundle_index_file(prefix_);
  const std::string good = testkit::slurp_file(index);
  for (size_t at = 0; at < good.size(); ++at) {
    std::ofstream(index, std::ios::binary | std::ios::trunc) << good;
    flip(index, at);
    try {
      read_bundle(prefix_);
      // leveldb's footer has padding no CRC covers; a flip there changes nothing read
      EXPECT_GE(at, good.size() - 48) << "a flipped index byte at " << at << " was not noticed";
      EXPECT_LT(at, good.size() - 8);
    } catch (const CheckpointError& e) {
      EXPECT_NE(std::string(e.what()).find(".index"), std::string::npos) << e.what();
    }
  }
  for (size_t cut : {size_t{0}, size_t{10}, good.size() - 1}) {
    std::ofstream(index, std::ios::binary | std::ios::trunc) << good.substr(0, cut);
    expect_error({".index"});
  }
}

}  // namespace
}  // namespace kiln::formats
