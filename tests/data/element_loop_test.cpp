// Dataset.map's C++ element loop below Python: a plan's host ops and graph call, the
// runner's order over threads, its errors and misses, and batching. The Python tests
// (tests/python/test_element_loop.py) hold whole pipelines to the Python loop bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "data/element_plan.h"
#include "data/element_runner.h"
#include "data/host_draws.h"
#include "formats/image_decode.h"
#include "kiln/base/error.h"

namespace kiln::data {
namespace {

HostValue bytes_of(const std::string& s) { return HostValue::of_bytes(s); }

std::string jpeg(int64_t h, int64_t w, uint8_t shade) {
  formats::Image img;
  img.height = h;
  img.width = w;
  img.channels = 3;
  img.pixels.assign(static_cast<size_t>(h * w * 3), shade);
  for (int64_t i = 0; i < h * w; ++i) img.pixels[static_cast<size_t>(3 * i)] = static_cast<uint8_t>(i % 251);
  return formats::encode_jpeg(img, 90, true);
}

// decode -> convert -> crop -> flip; the graph doubles the crop (an f32 input of [4, 4, 3]).
ElementPlan::Spec image_spec() {
  ElementPlan::Spec spec;
  spec.element_slots = 1;
  spec.slots = 5;
  PlanStep decode;
  decode.op = HostOp::decode_jpeg;
  decode.inputs = {0};
  decode.outputs = {1};
  decode.channels = 3;
  PlanStep convert;
  convert.op = HostOp::convert_image;
  convert.inputs = {1};
  convert.outputs = {2};
  convert.to_dtype = "f4";
  PlanStep crop;
  crop.op = HostOp::random_crop;
  crop.inputs = {2};
  crop.outputs = {3};
  crop.size = {4, 4, 3};
  crop.draw_index = 0;
  PlanStep flip;
  flip.op = HostOp::random_flip;
  flip.inputs = {3};
  flip.outputs = {4};
  flip.axis_index = 1;
  flip.draw_index = 1;
  spec.steps = {decode, convert, crop, flip};
  spec.inputs = {{4, DType::f32, {4, 4, 3}}};
  spec.seed = 11;
  spec.outputs = {{true, 0}, {false, 1}};  // the doubled crop, and the decoded image
  return spec;
}

std::vector<Array> doubled(std::vector<Array> in) {
  Array out = in.at(0);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] *= 2.0f;
  return {out};
}

TEST(ElementPlan, RunsHostOpsThenTheGraphWithTheDrawsOfThePosition) {
  const ElementPlan plan(image_spec(), doubled);
  const std::string file = jpeg(10, 12, 40);
  auto out = plan.run({bytes_of(file)}, 3, 0);
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->size(), 2u);
  const HostValue& image = (*out)[1];
  EXPECT_EQ(image.dtype, "u1");
  EXPECT_EQ(image.shape, (std::vector<int64_t>{10, 12, 3}));
  const HostValue& crop = (*out)[0];
  EXPECT_EQ(crop.dtype, "f4");
  ASSERT_EQ(crop.shape, (std::vector<int64_t>{4, 4, 3}));
  // Redo the crop and flip by hand with the same draws.
  HostDraws crop_draws(11, 3, 0, 0, -1), flip_draws(11, 3, 0, 1, -1);
  const int64_t y = crop_draws.integer(0, 7), x = crop_draws.integer(0, 9), c = crop_draws.integer(0, 1);
  const bool mirror = flip_draws.uniform() < 0.5;
  EXPECT_EQ(c, 0);
  const float* got = reinterpret_cast<const float*>(crop.raw());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k) {
        const int64_t jj = mirror ? 3 - j : j;
        const uint8_t pixel = image.raw()[((y + i) * 12 + x + jj) * 3 + k];
        EXPECT_EQ(got[(i * 4 + j) * 3 + k], 2.0f * (static_cast<float>(pixel) * static_cast<float>(1.0 / 255)));
      }
  // Another position draws another window or mirror somewhere among a few elements.
  bool differs = false;
  for (uint64_t p = 4; p < 12 && !differs; ++p) {
    auto other = plan.run({bytes_of(file)}, p, 0);
    differs = std::memcmp(other->at(0).raw(), crop.raw(), crop.data->size()) != 0;
  }
  EXPECT_TRUE(differs);
}

TEST(ElementPlan, AGraphInputOfAnotherShapeIsAMissAndBadBytesAnError) {
  ElementPlan::Spec spec = image_spec();
  spec.steps.pop_back();  // no flip: the graph reads the converted image, whose shape varies
  spec.steps.pop_back();
  spec.inputs = {{2, DType::f32, {10, 12, 3}}};
  const ElementPlan plan(spec, doubled);
  EXPECT_TRUE(plan.run({bytes_of(jpeg(10, 12, 1))}, 0, 0).has_value());
  EXPECT_FALSE(plan.run({bytes_of(jpeg(11, 12, 1))}, 0, 0).has_value());
  EXPECT_THROW(plan.run({bytes_of("not a jpeg")}, 0, 0), DataError);
}

TEST(ElementRunner, KeepsTheOrderOnEveryThreadCountAndStopsAtTheFirstError) {
  std::vector<std::string> files;
  for (int i = 0; i < 20; ++i) files.push_back(jpeg(8 + i % 3, 9, static_cast<uint8_t>(i * 10)));
  auto plan = std::make_shared<ElementPlan>(image_spec(), doubled);
  std::vector<std::vector<float>> first;
  for (int threads : {1, 2, 4}) {
    ElementRunner runner(plan, threads);
    std::vector<std::vector<HostValue>> elements;
    std::vector<uint64_t> positions;
    for (size_t i = 0; i < files.size(); ++i) {
      elements.push_back({bytes_of(files[i])});
      positions.push_back(100 + i);
    }
    elements[13] = {bytes_of("broken")};
    const int64_t a = runner.submit(elements, positions, 0);
    const int64_t b = runner.submit({{bytes_of(files[0])}}, {100}, 0);
    ElementRunner::Taken second = runner.take(b);  // taken out of order: fine
    ElementRunner::Taken taken = runner.take(a);
    ASSERT_EQ(taken.results.size(), 13u) << threads;  // up to the broken element
    EXPECT_TRUE(taken.error != nullptr);
    EXPECT_THROW(std::rethrow_exception(taken.error), DataError);
    std::vector<std::vector<float>> crops;
    for (const ElementResult& r : taken.results) {
      const float* f = reinterpret_cast<const float*>(r->at(0).raw());
      crops.emplace_back(f, f + 48);
    }
    EXPECT_EQ(std::vector<float>(reinterpret_cast<const float*>(second.results[0]->at(0).raw()),
                                 reinterpret_cast<const float*>(second.results[0]->at(0).raw()) + 48),
              crops[0]);
    if (first.empty()) first = crops;
    EXPECT_EQ(crops, first) << threads << " threads";
    EXPECT_THROW(runner.take(a), ConfigError);  // taken already
  }
}

TEST(ElementRunner, StacksEqualLeavesAndLeavesTheRestToTheCaller) {
  auto plan = std::make_shared<ElementPlan>(image_spec(), doubled);
  ElementRunner runner(plan, 2);
  const std::string same = jpeg(10, 12, 7), other = jpeg(9, 12, 7);
  auto t = runner.submit({{bytes_of(same)}, {bytes_of(same)}, {bytes_of(same)}}, {0, 1, 2}, 0);
  auto stacked = stack_results(runner.take(t).results);
  ASSERT_TRUE(stacked.has_value());
  EXPECT_EQ(stacked->at(0).shape, (std::vector<int64_t>{3, 4, 4, 3}));
  EXPECT_EQ(stacked->at(1).shape, (std::vector<int64_t>{3, 10, 12, 3}));
  t = runner.submit({{bytes_of(same)}, {bytes_of(other)}}, {0, 1}, 0);
  EXPECT_FALSE(stack_results(runner.take(t).results).has_value());  // decoded images of two sizes
  t = runner.submit({}, {}, 0);
  EXPECT_TRUE(runner.take(t).results.empty());
  EXPECT_THROW(runner.submit({{bytes_of(same)}}, {}, 0), ConfigError);
}

TEST(HostDraws, AreUniformKeyedAndUnbiasedOverRanges) {
  HostDraws d(1, 2, 3, 4, 5);
  double sum = 0;
  std::vector<int> counts(6, 0);
  const int n = 600000;
  for (int i = 0; i < n; ++i) {
    const double u = d.uniform();
    ASSERT_TRUE(u >= 0 && u < 1);
    sum += u;
    ++counts[static_cast<size_t>(d.integer(-2, 4) + 2)];
  }
  EXPECT_NEAR(sum / n, 0.5, 4 * std::sqrt(1.0 / 12 / n));
  for (int c : counts) EXPECT_NEAR(c, n / 6.0, 4 * std::sqrt(n / 6.0));
  HostDraws a(1, 2, 3, 4, 5), b(1, 2, 3, 4, -1), c(1, 2, 3, 5, 5);
  const double first = a.uniform();
  EXPECT_NE(first, b.uniform());
  EXPECT_NE(first, c.uniform());
  EXPECT_THROW(a.integer(3, 3), ConfigError);
}

}  // namespace
}  // namespace kiln::data
