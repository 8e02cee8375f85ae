// TensorFlow's checkpoint format against a checkpoint real TensorFlow wrote
// (fixtures/tf_checkpoint, by tf.compat.v1.train.Saver): kiln reads every tensor with its
// value, writes an index byte for byte as TensorFlow does, and refuses damage with an error
// naming the file and the tensor.
#include "formats/tensor_bundle.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "formats/crc32c.h"
#include "formats/fixture.h"
#include "formats/sstable.h"
#include "kiln/base/error.h"
#include "support/temp_files.h"
#include "tf_bundle.pb.h"

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

// A bundle of one tensor 't' whose index entry is `entry` (offset, size and CRC as given),
// over a data file of `data`.
void write_crafted_bundle(const std::string& prefix, tensorflow::BundleEntryProto entry, const std::string& data) {
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.mutable_version()->set_producer(1);
  std::ofstream(bundle_index_file(prefix), std::ios::binary | std::ios::trunc)
      << write_table({{"", header.SerializeAsString()}, {"t", entry.SerializeAsString()}});
  std::ofstream(bundle_data_file(prefix), std::ios::binary | std::ios::trunc) << data;
}

// [2^31, 2^31] f32 is 2^62 elements, whose 2^64 bytes wrapped to 0: an entry of size 0
// passed the size check and built an Array claiming 2^62 elements over 64 bytes.
TEST(TensorBundle, AShapeWhoseByteSizeOverflowsIsRefused) {
  const fs::path dir = testkit::fresh_dir("bundle-overflow");
  fs::create_directories(dir);
  const std::string prefix = (dir / "model.ckpt-1").string();
  struct Case {
    std::vector<int64_t> shape;
    tensorflow::DataType dtype;
    const char* says;
  };
  const int64_t big = int64_t{1} << 31;
  for (const Case& c : {Case{{big, big}, tensorflow::DT_FLOAT, "needs more than 2^63 bytes"},
                        Case{{big, big, 4}, tensorflow::DT_FLOAT, "has more than 2^63 elements"},
                        Case{{big, big}, tensorflow::DT_UINT8, "needs more than 2^63 bytes"}}) {
    tensorflow::BundleEntryProto e;
    e.set_dtype(c.dtype);
    for (int64_t d : c.shape) e.mutable_shape()->add_dim()->set_size(d);
    e.set_offset(0);
    e.set_size(0);
    e.set_crc32c(mask_crc(crc32c("")));
    write_crafted_bundle(prefix, e, std::string(64, '\0'));
    try {
      const auto tensors = read_bundle(prefix);
      ADD_FAILURE() << "read, claiming " << tensors.at("t").numel() << " elements";
    } catch (const CheckpointError& err) {
      const std::string m = err.what();
      EXPECT_NE(m.find("[checkpoint] '" + prefix + "', tensor 't': shape " + shape_str(c.shape)), std::string::npos) << m;
      EXPECT_NE(m.find(c.says), std::string::npos) << m;
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln::formats
