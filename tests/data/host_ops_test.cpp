// The host ops of the C++ element loop (src/data/host_ops/) against hand-computed values:
// the small-value ops shape code uses, sample_distorted_bounding_box's windows, bilinear
// and nearest resizes, central crops; and their errors.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "data/host_draws.h"
#include "data/host_ops/array_ops.h"
#include "data/host_ops/distorted_box.h"
#include "data/host_ops/image_ops.h"
#include "data/host_ops/resize.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

template <class T>
HostValue make(const char* dtype, std::vector<int64_t> shape, std::vector<T> values) {
  HostValue v = HostValue::numeric(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(v.numel()), values.size());
  std::memcpy(v.raw(), values.data(), values.size() * sizeof(T));
  return v;
}

template <class T>
std::vector<T> values(const HostValue& v) {
  std::vector<T> out(static_cast<size_t>(v.numel()));
  std::memcpy(out.data(), v.raw(), out.size() * sizeof(T));
  return out;
}

HostValue iota(std::vector<int64_t> shape) {
  HostValue v = HostValue::numeric("i4", shape);
  for (int64_t i = 0; i < v.numel(); ++i) reinterpret_cast<int32_t*>(v.raw())[i] = static_cast<int32_t>(i);
  return v;
}

TEST(HostArrayOps, ShapesAsNumpyGivesThem) {
  const HostValue x = iota({2, 3});
  EXPECT_EQ(expand_dims(x, 0).shape, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(expand_dims(x, -1).shape, (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(squeeze(iota({1, 3, 1}), {}).shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(squeeze(iota({1, 3, 1}), {-1}).shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(reshape(x, {3, -1}).shape, (std::vector<int64_t>{3, 2}));
  EXPECT_THROW(reshape(x, {4, -1}), ConfigError);
  EXPECT_THROW(squeeze(x, {0}), ConfigError);  // extent 2, not 1
  EXPECT_THROW(expand_dims(x, 3), ConfigError);
}

TEST(HostArrayOps, TransposeConcatStackUnstack) {
  const HostValue x = iota({2, 3});  // [[0 1 2] [3 4 5]]
  EXPECT_EQ(values<int32_t>(transpose(x, {1, 0})), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(values<int32_t>(transpose(x, {})), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_THROW(transpose(x, {0, 0}), ConfigError);
  const HostValue y = iota({2, 1});
  const HostValue c = concat({&x, &y}, 1);
  EXPECT_EQ(c.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(values<int32_t>(c), (std::vector<int32_t>{0, 1, 2, 0, 3, 4, 5, 1}));
  EXPECT_THROW(concat({&x, &y}, 0), ConfigError);  // 3 and 1 columns
  const HostValue s = stack({&x, &x}, 1);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(values<int32_t>(s), (std::vector<int32_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  const std::vector<HostValue> cols = unstack(x, 1);
  ASSERT_EQ(cols.size(), 3u);
  EXPECT_EQ(values<int32_t>(cols[2]), (std::vector<int32_t>{2, 5}));
  EXPECT_EQ(cols[2].shape, (std::vector<int64_t>{2}));
  const HostValue f = cast(x, "f4");
  EXPECT_EQ(values<float>(f)[5], 5.0f);
  EXPECT_EQ(values<uint8_t>(cast(make<float>("f4", {2}, {0.0f, -2.5f}), "b1")), (std::vector<uint8_t>{0, 1}));
}

TEST(HostImageOps, BilinearResizeInterpolatesAlongWidthThenHeight) {
  // A 2x2 image of one channel to 2x4 (TensorFlow 1's coordinates: x_out * in / out).
  const HostValue img = make<uint8_t>("u1", {2, 2, 1}, {0, 100, 200, 40});
  const HostValue out = resize(img, ResizeSpec{2, 4, false, false, false}, "resize_images");
  ASSERT_EQ(out.dtype, "f4");
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 50, 100, 100, 200, 120, 40, 40}));
  const HostValue up = resize(img, ResizeSpec{3, 2, false, false, true}, "resize_bilinear");  // half-pixel rows
  EXPECT_FLOAT_EQ(values<float>(up)[2], 0.5f * 0 + 0.5f * 200);  // row 1: y = 1.5 * 2/3 - 0.5 = 0.5
  EXPECT_THROW(resize(img, ResizeSpec{0, 4, false, false, false}, "resize_images"), ConfigError);
}

TEST(HostImageOps, NearestResizeKeepsTheDtypeAndCentralCropTakesTheMiddle) {
  const HostValue img = make<uint8_t>("u1", {2, 3, 1}, {1, 2, 3, 4, 5, 6});
  const HostValue n = resize(img, ResizeSpec{4, 3, true, false, false}, "resize_nearest_neighbor");
  EXPECT_EQ(n.dtype, "u1");
  EXPECT_EQ(values<uint8_t>(n), (std::vector<uint8_t>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  const HostValue big = iota({10, 10, 1});
  const HostValue c = central_crop(big, 0.5);  // offsets int((10 - 5) / 2) = 2, size 6
  EXPECT_EQ(c.shape, (std::vector<int64_t>{6, 6, 1}));
  EXPECT_EQ(values<int32_t>(c)[0], 22);
  EXPECT_THROW(central_crop(big, 0.0), ConfigError);
}

TEST(DistortedBox, WindowsFitTheImageAndCoverTheBox) {
  const HostValue size = make<int32_t>("i4", {3}, {90, 120, 3});
  const HostValue box = make<float>("f4", {1, 1, 4}, {0.2f, 0.3f, 0.8f, 0.9f});
  DistortedBoxSettings s;
  s.covered = 0.5f;
  s.area_low = 0.1f;
  for (uint64_t p = 0; p < 200; ++p) {
    HostDraws draws(1, p, 0, 0, -1);
    const std::vector<HostValue> out = sample_distorted_box(size, box, s, draws);
    const std::vector<int32_t> b = values<int32_t>(out[0]), e = values<int32_t>(out[1]);
    ASSERT_EQ(b[2], 0);
    ASSERT_EQ(e[2], -1);
    ASSERT_TRUE(b[0] >= 0 && b[0] + e[0] <= 90 && b[1] >= 0 && b[1] + e[1] <= 120);
    const int64_t iw = std::max(0, std::min(b[1] + e[1], 108) - std::max(b[1], 36));
    const int64_t ih = std::max(0, std::min(b[0] + e[0], 72) - std::max(b[0], 18));
    const bool whole = b[0] == 0 && b[1] == 0 && e[0] == 90 && e[1] == 120;
    ASSERT_TRUE(whole || static_cast<double>(iw * ih) / (72.0 * 54.0) >= 0.5) << p;
    const std::vector<float> w = values<float>(out[2]);
    EXPECT_FLOAT_EQ(w[0], static_cast<float>(b[0] / 90.0));
  }
}

TEST(DistortedBox, ImpossibleRangesGiveTheWholeImageAndBadBoxesAreErrors) {
  const HostValue size = make<int64_t>("i8", {3}, {10, 10, 3});
  const HostValue none = HostValue::numeric("f4", {1, 0, 4});
  DistortedBoxSettings s;
  s.use_image = true;
  s.covered = 1.0f;
  s.area_high = 0.05f;  // at most 5 pixels: never covers the whole image
  HostDraws draws(1, 0, 0, 0, -1);
  const std::vector<HostValue> out = sample_distorted_box(size, none, s, draws);
  EXPECT_EQ(out[0].dtype, "i8");
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{10, 10, -1}));
  s.use_image = false;
  EXPECT_THROW(sample_distorted_box(size, none, s, draws), ConfigError);
  const HostValue outside = make<float>("f4", {1, 1, 4}, {0.1f, 0.1f, 1.5f, 0.9f});
  EXPECT_THROW(sample_distorted_box(size, outside, s, draws), ConfigError);
  EXPECT_THROW(sample_distorted_box(make<int32_t>("i4", {2}, {10, 10}), outside, s, draws), ConfigError);
}

}  // namespace
}  // namespace kiln::data
