// tf.train.Example parsing against the records real TensorFlow serialized
// (tests/formats/fixtures/make_fixtures.py): every feature kind, defaults, and a clear error
// naming the example and the key for each way a record can miss its spec.
#include "formats/example.h"

#include <gtest/gtest.h>

#include <limits>

#include "formats/fixture.h"
#include "kiln/base/error.h"

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
  weight.default_floats = {0.5};
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
  bad.default_floats = {1, 2};
  EXPECT_NE(error_of([&] { parse_examples({ex[0]}, {bad}); }).find("config: [parse_example] feature 'w': default_value has 2"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_example("\xff\xff"); }).find("[Example] 2 bytes are not"), std::string::npos);
}

// Int64 defaults are exact: through a double, 2^63-1 became -2^63 and 2^53+1 became 2^53.
TEST(Example, Int64DefaultsAreExact) {
  const std::vector<int64_t> values = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                       (int64_t{1} << 53) + 1};
  FeatureSpec all = spec("missing", FeatureKind::fixed_len, FeatureType::int64, {3});
  all.has_default = true;
  all.default_ints = values;
  FeatureSpec one = spec("missing", FeatureKind::fixed_len, FeatureType::int64, {2});
  one.has_default = true;
  one.default_ints = {std::numeric_limits<int64_t>::max()};
  const auto parsed = parse_examples({examples()[0]}, {all, one});
  EXPECT_EQ(parsed[0].ints, values);
  EXPECT_EQ(parsed[1].ints, (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                                  std::numeric_limits<int64_t>::max()}));
}

// A shape whose element count overflows int64 is refused before parsing, naming the
// feature and the shape (it wrapped to 0 and passed for a feature of no values).
TEST(Example, AShapeOfMoreThan2To63ElementsIsRefused) {
  const int64_t big = int64_t{1} << 32;
  for (FeatureKind kind : {FeatureKind::fixed_len, FeatureKind::fixed_len_sequence}) {
    const FeatureSpec s = spec("image", kind, FeatureType::float32, {big, big});
    EXPECT_NE(error_of([&] { parse_examples({examples()[0]}, {s}); })
                  .find("config: [parse_example] feature 'image': shape [4294967296, 4294967296] has more than 2^63 "
                        "elements"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace kiln::formats
