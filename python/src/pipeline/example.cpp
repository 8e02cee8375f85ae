// tf.train.Example parsing (formats/example.h) for Python: kiln.io.parse_example and
// parse_single_example build their outputs from what this returns.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "formats/example.h"
#include "module.h"
#include "pipeline/example_specs.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

formats::FeatureType feature_type(const std::string& t) {
  if (t == "float32") return formats::FeatureType::float32;
  if (t == "int64") return formats::FeatureType::int64;
  if (t == "string") return formats::FeatureType::bytes;
  throw py::value_error("[parse_example] a feature's dtype is " + t + "; valid: float32, int64, string");
}

formats::FeatureKind feature_kind(const std::string& k) {
  if (k == "fixed") return formats::FeatureKind::fixed_len;
  if (k == "var") return formats::FeatureKind::var_len;
  if (k == "sequence") return formats::FeatureKind::fixed_len_sequence;
  throw py::value_error("[parse_example] feature kind " + k + "; valid: fixed, var, sequence");
}

py::object values_of(formats::ParsedFeature& p, formats::FeatureType t) {
  if (t == formats::FeatureType::float32) return py::array_t<float>(p.floats.size(), p.floats.data());
  if (t == formats::FeatureType::int64) return py::array_t<int64_t>(p.ints.size(), p.ints.data());
  py::list out;
  for (const auto& b : p.bytes) out.append(py::bytes(b));
  return out;
}

}  // namespace

std::vector<formats::FeatureSpec> feature_specs(const py::list& specs) {
  std::vector<formats::FeatureSpec> fs;
  for (const auto& item : specs) {
    auto t = item.cast<py::tuple>();
    formats::FeatureSpec s;
    s.key = t[0].cast<std::string>();
    s.kind = feature_kind(t[1].cast<std::string>());
    s.type = feature_type(t[2].cast<std::string>());
    s.shape = t[3].cast<std::vector<int64_t>>();
    if (!t[4].is_none()) {
      s.has_default = true;
      // int64 defaults as Python ints, exact (a double would round 2^53+1 and wrap 2^63-1).
      if (s.type == formats::FeatureType::int64) s.default_ints = t[4].cast<std::vector<int64_t>>();
      else s.default_floats = t[4].cast<std::vector<double>>();
    }
    if (!t[5].is_none()) {
      s.has_default = true;
      s.default_bytes = t[5].cast<std::vector<std::string>>();
    }
    fs.push_back(std::move(s));
  }
  return fs;
}

void bind_example(py::module_& m) {
  // specs: (key, kind, dtype, shape, default numbers or None, default bytes or None) each.
  // Returns per spec (values: a float32/int64 array or a list of bytes, counts: int64 array).
  m.def("parse_examples", [](const std::vector<py::bytes>& serialized, const py::list& specs) {
    const std::vector<formats::FeatureSpec> fs = feature_specs(specs);
    std::vector<std::string> records;
    records.reserve(serialized.size());
    for (const auto& b : serialized) records.emplace_back(b);
    std::vector<formats::ParsedFeature> parsed;
    {
      py::gil_scoped_release release;
      parsed = formats::parse_examples(records, fs);
    }
    py::list out;
    for (size_t i = 0; i < fs.size(); ++i)
      out.append(py::make_tuple(values_of(parsed[i], fs[i].type),
                                py::array_t<int64_t>(parsed[i].counts.size(), parsed[i].counts.data())));
    return out;
  });
  // features: (key, dtype, values) each -> the serialized tf.train.Example.
  m.def("serialize_example", [](const py::list& features) {
    std::vector<formats::ExampleFeature> fs;
    for (const auto& item : features) {
      auto t = item.cast<py::tuple>();
      formats::ExampleFeature f;
      f.key = t[0].cast<std::string>();
      f.type = feature_type(t[1].cast<std::string>());
      if (f.type == formats::FeatureType::float32) f.floats = t[2].cast<std::vector<float>>();
      if (f.type == formats::FeatureType::int64) f.ints = t[2].cast<std::vector<int64_t>>();
      if (f.type == formats::FeatureType::bytes) f.bytes = t[2].cast<std::vector<std::string>>();
      fs.push_back(std::move(f));
    }
    return py::bytes(formats::serialize_example(fs));
  });
  // A serialized Example -> [(key, dtype or "empty", values)], sorted by key.
  m.def("example_keys", [](const py::bytes& serialized) {
    py::list out;
    for (auto& f : formats::read_example(std::string(serialized))) {
      if (f.empty) {
        out.append(py::make_tuple(f.key, "empty", py::list()));
        continue;
      }
      formats::ParsedFeature p{std::move(f.floats), std::move(f.ints), std::move(f.bytes), {}};
      py::object values = values_of(p, f.type);
      out.append(py::make_tuple(f.key, f.type == formats::FeatureType::float32 ? "float32"
                                       : f.type == formats::FeatureType::int64 ? "int64" : "string",
                                py::list(values)));
    }
    return out;
  });
}

}  // namespace kiln::python
