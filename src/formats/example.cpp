#include "formats/example.h"

#include <algorithm>

#include "kiln/base/error.h"
#include "tf_example.pb.h"

namespace kiln::formats {

namespace {

const char* type_name(FeatureType t) {
  switch (t) {
    case FeatureType::float32: return "float32";
    case FeatureType::int64: return "int64";
    case FeatureType::bytes: return "string";
  }
  return "?";
}

const char* kind_name(tensorflow::Feature::KindCase k) {
  switch (k) {
    case tensorflow::Feature::kFloatList: return "float32";
    case tensorflow::Feature::kInt64List: return "int64";
    case tensorflow::Feature::kBytesList: return "string";
    default: return "empty";
  }
}

// The element count of a shape check_spec has checked (extents >= 0, no overflow).
int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The values of `f` appended to `out`; how many. An empty Feature (no kind set) holds
// none of any type, as in TensorFlow.
int64_t append(const tensorflow::Feature& f, const FeatureSpec& spec, size_t example, ParsedFeature& out) {
  const auto kind = f.kind_case();
  if (kind == tensorflow::Feature::KIND_NOT_SET) return 0;
  const bool match = (spec.type == FeatureType::float32 && kind == tensorflow::Feature::kFloatList) ||
                     (spec.type == FeatureType::int64 && kind == tensorflow::Feature::kInt64List) ||
                     (spec.type == FeatureType::bytes && kind == tensorflow::Feature::kBytesList);
  if (!match)
    KILN_THROW(DataError) << "[parse_example] example " << example << ", feature '" << spec.key << "': holds "
                          << kind_name(kind) << " values; the spec asks for " << type_name(spec.type);
  switch (spec.type) {
    case FeatureType::float32:
      out.floats.insert(out.floats.end(), f.float_list().value().begin(), f.float_list().value().end());
      return f.float_list().value_size();
    case FeatureType::int64:
      out.ints.insert(out.ints.end(), f.int64_list().value().begin(), f.int64_list().value().end());
      return f.int64_list().value_size();
    case FeatureType::bytes:
      for (const auto& b : f.bytes_list().value()) out.bytes.push_back(b);
      return f.bytes_list().value_size();
  }
  return 0;
}

size_t defaults_given(const FeatureSpec& spec) {
  switch (spec.type) {
    case FeatureType::float32: return spec.default_floats.size();
    case FeatureType::int64: return spec.default_ints.size();
    case FeatureType::bytes: return spec.default_bytes.size();
  }
  return 0;
}

void append_default(const FeatureSpec& spec, int64_t n, ParsedFeature& out) {
  const size_t given = defaults_given(spec);
  for (int64_t i = 0; i < n; ++i) {
    const size_t j = given == 1 ? 0 : static_cast<size_t>(i);
    if (spec.type == FeatureType::float32) out.floats.push_back(static_cast<float>(spec.default_floats[j]));
    if (spec.type == FeatureType::int64) out.ints.push_back(spec.default_ints[j]);
    if (spec.type == FeatureType::bytes) out.bytes.push_back(spec.default_bytes[j]);
  }
}

void check_spec(const FeatureSpec& spec) {
  int64_t n = 1;
  for (int64_t d : spec.shape) {
    if (d < 0)
      KILN_THROW(ConfigError) << "[parse_example] feature '" << spec.key << "': shape " << shape_text(spec.shape)
                              << " must be fully defined (dimensions >= 0)";
    if (__builtin_mul_overflow(n, d, &n))
      KILN_THROW(ConfigError) << "[parse_example] feature '" << spec.key << "': shape " << shape_text(spec.shape)
                              << " has more than 2^63 elements";
  }
  if (spec.kind != FeatureKind::fixed_len || !spec.has_default) return;
  const size_t given = defaults_given(spec);
  if (given != 1 && static_cast<int64_t>(given) != elements(spec.shape))
    KILN_THROW(ConfigError) << "[parse_example] feature '" << spec.key << "': default_value has " << given
                            << " values; shape " << shape_text(spec.shape) << " needs " << elements(spec.shape)
                            << " (or one for every element)";
}

}  // namespace

std::vector<ParsedFeature> parse_examples(const std::vector<std::string>& serialized,
                                          const std::vector<FeatureSpec>& specs) {
  for (const auto& s : specs) check_spec(s);
  std::vector<ParsedFeature> out(specs.size());
  tensorflow::Example example;
  for (size_t e = 0; e < serialized.size(); ++e) {
    example.Clear();
    if (!example.ParseFromString(serialized[e]))
      KILN_THROW(DataError) << "[parse_example] example " << e << " (" << serialized[e].size()
                            << " bytes) is not a serialized tf.train.Example";
    const auto& features = example.features().feature();
    for (size_t i = 0; i < specs.size(); ++i) {
      const FeatureSpec& spec = specs[i];
      ParsedFeature& p = out[i];
      auto it = features.find(spec.key);
      const int64_t want = elements(spec.shape);
      if (spec.kind == FeatureKind::fixed_len) {
        if (it == features.end()) {
          if (!spec.has_default)
            KILN_THROW(DataError) << "[parse_example] example " << e << ": feature '" << spec.key << "' ("
                                  << type_name(spec.type) << ", shape " << shape_text(spec.shape)
                                  << ") is required but missing; give FixedLenFeature a default_value to allow that";
          append_default(spec, want, p);
          continue;
        }
        const int64_t got = append(it->second, spec, e, p);
        if (got != want)
          KILN_THROW(DataError) << "[parse_example] example " << e << ", feature '" << spec.key << "': " << got
                                << " values, but shape " << shape_text(spec.shape) << " needs " << want;
        continue;
      }
      const int64_t got = it == features.end() ? 0 : append(it->second, spec, e, p);
      if (spec.kind == FeatureKind::fixed_len_sequence && want > 0 && got % want != 0)
        KILN_THROW(DataError) << "[parse_example] example " << e << ", feature '" << spec.key << "': " << got
                              << " values are not whole steps of shape " << shape_text(spec.shape) << " (" << want
                              << " values each)";
      p.counts.push_back(got);
    }
  }
  return out;
}

std::string serialize_example(const std::vector<ExampleFeature>& features) {
  tensorflow::Example example;
  auto* map = example.mutable_features()->mutable_feature();
  for (const auto& f : features) {
    tensorflow::Feature& out = (*map)[f.key];
    if (f.empty) continue;
    if (f.type == FeatureType::float32) out.mutable_float_list()->mutable_value()->Add(f.floats.begin(), f.floats.end());
    if (f.type == FeatureType::int64) out.mutable_int64_list()->mutable_value()->Add(f.ints.begin(), f.ints.end());
    if (f.type == FeatureType::bytes)
      for (const auto& v : f.bytes) out.mutable_bytes_list()->add_value(v);
  }
  std::string s;
  example.SerializeToString(&s);
  return s;
}

std::vector<ExampleFeature> read_example(const std::string& serialized) {
  tensorflow::Example example;
  if (!example.ParseFromString(serialized))
    KILN_THROW(DataError) << "[Example] " << serialized.size() << " bytes are not a serialized tf.train.Example";
  std::vector<ExampleFeature> out;
  for (const auto& [key, f] : example.features().feature()) {
    ExampleFeature e;
    e.key = key;
    switch (f.kind_case()) {
      case tensorflow::Feature::kFloatList:
        e.floats.assign(f.float_list().value().begin(), f.float_list().value().end());
        break;
      case tensorflow::Feature::kInt64List:
        e.type = FeatureType::int64;
        e.ints.assign(f.int64_list().value().begin(), f.int64_list().value().end());
        break;
      case tensorflow::Feature::kBytesList:
        e.type = FeatureType::bytes;
        e.bytes.assign(f.bytes_list().value().begin(), f.bytes_list().value().end());
        break;
      default: e.empty = true;
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const ExampleFeature& a, const ExampleFeature& b) { return a.key < b.key; });
  return out;
}

}  // namespace kiln::formats
