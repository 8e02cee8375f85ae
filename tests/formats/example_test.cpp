// tf.train.Example parsing against the records real TensorFlow serialized
// (tests/formats/fixtures/make_fixtures.py): every feature kind, defaults, and a clear error
// naming the example and the key for each way a record can miss its spec.
#include "formats/example.h"

#include <gtest/gtest.h>

#include "formats/fixture.h"
#include "kiln/error.h"

namespace kiln::formats {
namespace {

std::vector<std::string> examples() { return testkit::tf_expected_bytes("parsing_examples"); }

FeatureSpec spec(std::string key, FeatureKind kind, FeatureType type, std::vector<int64_t> shape = {}) {
  FeatureSpec s;
  s.key = std::move(key);
  s.kind = kind;
  s.type = type;
  s.shape = std::move(shape);
  return s;
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  } catch (const ConfigError& e) {
    return std::string("config: ") + e.what();
  }
  return "";
}

TEST(Example, ParsesEveryKindOfTensorFlowsRecords) {
  const auto ex = examples();
  FeatureSpec weight = spec("weight", FeatureKind::fixed_len, FeatureType::float32, {1});
  weight.has_default = true;
  weight.default_numbers = {0.5};
  const auto parsed = parse_examples(
      {ex[0], ex[1], ex[2]},
      {spec("image/class/label", FeatureKind::fixed_len, FeatureType::int64),
       spec("image/encoded", FeatureKind::fixed_len, FeatureType::bytes), weight,
       spec("tokens", FeatureKind::var_len, FeatureType::int64),
       spec("points", FeatureKind::fixed_len_sequence, FeatureType::float32, {2})});
  EXPECT_EQ(parsed[0].ints, (std::vector<int64_t>{0, 1, 2}));
  ASSERT_EQ(parsed[1].bytes.size(), 3u);
  EXPECT_EQ(parsed[1].bytes[1].size(), 12u);
  EXPECT_EQ(static_cast<unsigned char>(parsed[1].bytes[1][1]), 4);  // (1 * (1 + 3)) % 256
  EXPECT_EQ(parsed[2].floats, (std::vector<float>{0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(parsed[3].counts, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(parsed[3].ints, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(parsed[4].counts, (std::vector<int64_t>{2, 4, 2}));
}

TEST(Example, SerializesWhatItReads) {
  ExampleFeature a{"a", FeatureType::float32, {1.5f, -2.0f}, {}, {}};
  ExampleFeature b{"b", FeatureType::bytes, {}, {}, {"xy", std::string("\0z", 2)}};
  ExampleFeature c{"c", FeatureType::int64, {}, {-(int64_t{1} << 40)}, {}};
  const auto back = read_example(serialize_example({c, a, b}));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].key, "a");
  EXPECT_EQ(back[0].floats, a.floats);
  EXPECT_EQ(back[1].bytes, b.bytes);
  EXPECT_EQ(back[2].ints, c.ints);
  // Equal to TensorFlow's own serialization of the same example
  const auto ex = examples();
  const auto theirs = read_example(ex[7]);
  std::vector<ExampleFeature> same(theirs.begin(), theirs.end());
  EXPECT_EQ(read_example(serialize_example(same)).size(), theirs.size());
}

TEST(Example, RecordsThatMissTheirSpecNameExampleAndKey) {
  const auto ex = examples();
  EXPECT_NE(error_of([&] { parse_examples({ex[0]}, {spec("nope", FeatureKind::fixed_len, FeatureType::int64)}); })
                .find("example 0: feature 'nope' (int64, shape []) is required but missing"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_examples({ex[0], ex[1]}, {spec("image/class/label", FeatureKind::fixed_len, FeatureType::bytes)});
            }).find("holds int64 values; the spec asks for string"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_examples({ex[3]}, {spec("points", FeatureKind::fixed_len, FeatureType::float32, {3})}); })
                .find("feature 'points': 4 values, but shape [3] needs 3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_examples({ex[0], std::string("\x0a\x05zz", 4)}, {}); })
                .find("example 1 (4 bytes) is not a serialized tf.train.Example"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              parse_examples({ex[3]}, {spec("points", FeatureKind::fixed_len_sequence, FeatureType::float32, {3})});
            }).find("not whole steps of shape [3]"),
            std::string::npos);
  FeatureSpec bad = spec("w", FeatureKind::fixed_len, FeatureType::float32, {3});
  bad.has_default = true;
  bad.default_numbers = {1, 2};
  EXPECT_NE(error_of([&] { parse_examples({ex[0]}, {bad}); }).find("config: [parse_example] feature 'w': default_value has 2"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_example("\xff\xff"); }).find("[Example] 2 bytes are not"), std::string::npos);
}

}  // namespace
}  // namespace kiln::formats
