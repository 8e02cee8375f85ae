// tf.train.Example protos (src/formats/proto/tf_example.proto) parsed against a feature
// spec, as tf.io.parse_example does: FixedLenFeature (a value of a fixed shape, or its
// default when the feature is missing), VarLenFeature (any number of values) and
// FixedLenSequenceFeature (any number of steps of a fixed shape). protobuf decodes the
// wire format; this checks what TensorFlow checks and names the example, the key and
// what was expected when a record does not fit the spec.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::formats {

enum class FeatureKind { fixed_len, var_len, fixed_len_sequence };
enum class FeatureType { float32, int64, bytes };

struct FeatureSpec {
  std::string key;
  FeatureKind kind = FeatureKind::fixed_len;
  FeatureType type = FeatureType::float32;
  std::vector<int64_t> shape;  // fixed_len: the value's shape; fixed_len_sequence: one step's
  // fixed_len: a missing feature takes these values (all elements, or one for every
  // element); without them a missing feature is an error. fixed_len_sequence: the padding.
  // Those of the spec's type: an int64 default is held as int64 (a double would turn
  // 2^63-1 into -2^63 and 2^53+1 into 2^53).
  bool has_default = false;
  std::vector<double> default_floats;
  std::vector<int64_t> default_ints;
  std::vector<std::string> default_bytes;
};

// One feature over a batch of examples: the values of every example one after another,
// and how many each example gave (for var_len and fixed_len_sequence; fixed_len gives the
// spec's element count each).
struct ParsedFeature {
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> bytes;
  std::vector<int64_t> counts;
};

// Parses `serialized` (one tf.train.Example each) into one ParsedFeature per spec. A
// record that is not an Example, a feature of another type, a fixed_len feature with
// the wrong number of values or missing without a default: DataError naming the example's
// index, the key and what the spec asks for. A spec whose shape has more than 2^63
// elements, or whose default does not fit it: ConfigError naming the key and the shape.
std::vector<ParsedFeature> parse_examples(const std::vector<std::string>& serialized,
                                          const std::vector<FeatureSpec>& specs);

// A serialized tf.train.Example of `features` (key -> values of one type), for tests and
// writers: what tf.train.Example(...).SerializeToString() gives.
struct ExampleFeature {
  std::string key;
  FeatureType type = FeatureType::float32;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> bytes;
  bool empty = false;  // a Feature with no list set
};
std::string serialize_example(const std::vector<ExampleFeature>& features);
// The features of a serialized tf.train.Example, by key; DataError when it is not one.
std::vector<ExampleFeature> read_example(const std::string& serialized);

}  // namespace kiln::formats
