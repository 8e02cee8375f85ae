#include "data/element_plan.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "data/host_draws.h"
#include "data/host_ops/array_ops.h"
#include "data/host_ops/image_ops.h"
#include "formats/image_decode.h"
#include "kiln/base/error.h"

namespace kiln::data {

namespace {

const char* op_name(HostOp op) {
  switch (op) {
    case HostOp::parse_example: return "parse_single_example";
    case HostOp::decode_jpeg: return "decode_jpeg";
    case HostOp::decode_png: return "decode_png";
    case HostOp::decode_raw: return "decode_raw";
    case HostOp::convert_image: return "convert_image_dtype";
    case HostOp::random_crop: return "random_crop";
    case HostOp::random_flip: return "random_flip";
    case HostOp::jpeg_shape: return "extract_jpeg_shape";
    case HostOp::decode_and_crop_jpeg: return "decode_and_crop_jpeg";
    case HostOp::distorted_box: return "sample_distorted_bounding_box";
    case HostOp::resize: return "resize";
    case HostOp::central_crop: return "central_crop";
    case HostOp::expand_dims: return "expand_dims";
    case HostOp::squeeze: return "squeeze";
    case HostOp::reshape: return "reshape";
    case HostOp::transpose: return "transpose";
    case HostOp::concat: return "concat";
    case HostOp::stack: return "stack";
    case HostOp::unstack: return "unstack";
    case HostOp::cast: return "cast";
  }
  return "?";
}

const HostValue& numeric_input(const std::vector<HostValue>& slots, int slot, HostOp op) {
  const HostValue& v = slots.at(static_cast<size_t>(slot));
  if (v.is_bytes || !v.data) KILN_THROW(ConfigError) << "[" << op_name(op) << "] takes a numeric value, not bytes";
  return v;
}

const std::string& bytes_input(const std::vector<HostValue>& slots, int slot, HostOp op) {
  const HostValue& v = slots.at(static_cast<size_t>(slot));
  if (!v.is_bytes) KILN_THROW(ConfigError) << "[" << op_name(op) << "] contents is a numeric value; it takes bytes";
  return v.bytes;
}

// One int64 x of shape {} or {1}.
HostValue int64_value(int64_t x, std::vector<int64_t> shape) {
  HostValue v = HostValue::numeric("i8", std::move(shape));
  std::memcpy(v.raw(), &x, sizeof x);
  return v;
}

std::vector<HostValue> parse(const PlanStep& s, const std::string& record) {
  const std::vector<formats::ParsedFeature> parsed = formats::parse_examples({record}, s.features);
  std::vector<HostValue> out;
  for (size_t i = 0; i < s.features.size(); ++i) {
    const formats::FeatureSpec& f = s.features[i];
    if (f.type == formats::FeatureType::bytes) {
      out.push_back(HostValue::of_bytes(parsed[i].bytes.at(0)));
      continue;
    }
    const bool floats = f.type == formats::FeatureType::float32;
    const bool var_len = f.kind == formats::FeatureKind::var_len;
    const int64_t count = var_len ? parsed[i].counts.at(0) : 0;
    HostValue v = HostValue::numeric(floats ? "f4" : "i8", var_len ? std::vector<int64_t>{count} : f.shape);
    const size_t n = static_cast<size_t>(v.numel()) * v.itemsize();
    std::memcpy(v.raw(), floats ? static_cast<const void*>(parsed[i].floats.data()) : parsed[i].ints.data(), n);
    if (!var_len) {
      out.push_back(std::move(v));
      continue;
    }
    // A VarLenFeature of one example: tf.SparseTensor's indices [n, 1], values, dense_shape [n].
    HostValue indices = HostValue::numeric("i8", {count, 1});
    for (int64_t k = 0; k < count; ++k) reinterpret_cast<int64_t*>(indices.raw())[k] = k;
    out.push_back(std::move(indices));
    out.push_back(std::move(v));
    out.push_back(int64_value(count, {1}));
  }
  return out;
}

// tf.io.decode_raw of one string: its bytes as values of s.to_dtype, in the host's order.
HostValue decode_raw(const PlanStep& s, std::string b) {
  if (s.fixed_length >= 0) b.resize(static_cast<size_t>(s.fixed_length), '\0');
  const size_t item = host_itemsize(s.to_dtype);
  if (b.size() % item)
    KILN_THROW(ConfigError) << "[decode_raw] " << b.size() << " bytes are not a whole number of " << s.type_name
                          << " values (" << item << " bytes each)";
  HostValue v = HostValue::numeric(s.to_dtype, {static_cast<int64_t>(b.size() / item)});
  std::memcpy(v.raw(), b.data(), b.size());
  if (!s.little_endian)
    for (size_t i = 0; i < b.size(); i += item) std::reverse(v.raw() + i, v.raw() + i + item);
  return v;
}

HostValue decode_and_crop(const PlanStep& s, const std::string& contents, const HostValue& crop_window) {
  const std::vector<int64_t> w = host_ints(crop_window, "decode_and_crop_jpeg");
  if (w.size() != 4)
    KILN_THROW(ConfigError) << "[decode_and_crop_jpeg] crop_window has " << w.size()
                            << " values; it is [offset_y, offset_x, height, width]";
  const formats::CropWindow crop{w[0], w[1], w[2], w[3]};
  return image_value(formats::decode_jpeg(contents, s.channels, s.dct, s.fancy_upscaling, &crop));
}

HostValue jpeg_shape(const PlanStep& s, const std::string& contents) {
  const formats::JpegShape shape = formats::jpeg_shape(contents);
  HostValue v = HostValue::numeric("i8", {3});
  const int64_t values[3] = {shape.height, shape.width, shape.components};
  std::memcpy(v.raw(), values, sizeof values);
  return cast(v, s.to_dtype);
}

// A host value as the graph input it feeds (numpy's astype to the input's dtype).
Array graph_value(const HostValue& x, DType dtype) {
  Array a = Array::uninitialized(dtype, x.shape);
  switch (dtype) {
    case DType::f32: cast_into(x, a.data<float>()); break;
    case DType::f16: cast_into(x, a.data<_Float16>()); break;
    case DType::i32: cast_into(x, a.data<int32_t>()); break;
    case DType::i64: cast_into(x, a.data<int64_t>()); break;
    case DType::boolean: cast_into(x, a.data<bool>()); break;
    default: KILN_THROW(ConfigError) << "[Dataset.map] a graph input of dtype " << dtype_name(dtype) << " on the host";
  }
  return a;
}

HostValue host_value(const Array& a) {
  const char* code = a.dtype() == DType::f32 ? "f4" : a.dtype() == DType::f16 ? "f2" : a.dtype() == DType::i32 ? "i4"
                     : a.dtype() == DType::i64 ? "i8" : a.dtype() == DType::boolean ? "b1" : nullptr;
  if (!code) KILN_THROW(ConfigError) << "[Dataset.map] a result of dtype " << dtype_name(a.dtype()) << " on the host";
  HostValue v = HostValue::numeric(code, a.shape());
  std::memcpy(v.raw(), a.bytes(), a.nbytes());
  return v;
}

}  // namespace

ElementPlan::ElementPlan(Spec spec, GraphRun graph) : spec_(std::move(spec)), graph_(std::move(graph)) {}

void ElementPlan::run_step(const PlanStep& s, std::vector<HostValue>& slots, uint64_t position, uint64_t rank) const {
  auto in = [&](size_t i) -> const HostValue& { return numeric_input(slots, s.inputs.at(i), s.op); };
  auto bytes = [&](size_t i) -> const std::string& { return bytes_input(slots, s.inputs.at(i), s.op); };
  auto all = [&] {
    std::vector<const HostValue*> values;
    for (int slot : s.inputs) values.push_back(&numeric_input(slots, slot, s.op));
    return values;
  };
  std::optional<HostDraws> made;  // a random op's generator; the others draw nothing
  auto draws = [&]() -> HostDraws& {
    if (!made) made.emplace(spec_.seed, position, rank, static_cast<uint64_t>(s.draw_index), s.draw_seed);
    return *made;
  };
  std::vector<HostValue> out;
  switch (s.op) {
    case HostOp::parse_example: out = parse(s, bytes(0)); break;
    case HostOp::decode_jpeg:
      out.push_back(image_value(formats::decode_jpeg(bytes(0), s.channels, s.dct, s.fancy_upscaling)));
      break;
    case HostOp::decode_and_crop_jpeg: out.push_back(decode_and_crop(s, bytes(0), in(1))); break;
    case HostOp::jpeg_shape: out.push_back(jpeg_shape(s, bytes(0))); break;
    case HostOp::decode_png:
      out.push_back(image_value(formats::decode_png(bytes(0), s.channels, s.sixteen_bit)));
      break;
    case HostOp::decode_raw: out.push_back(decode_raw(s, bytes(0))); break;
    case HostOp::convert_image: out.push_back(convert_image(in(0), s.to_dtype)); break;
    case HostOp::random_crop: out.push_back(random_crop(in(0), s.size, draws())); break;
    case HostOp::random_flip: out.push_back(random_flip(in(0), s.axis_index, draws())); break;
    case HostOp::distorted_box: out = sample_distorted_box(in(0), in(1), s.box, draws()); break;
    case HostOp::resize: out.push_back(resize(in(0), s.resize, s.op_name)); break;
    case HostOp::central_crop: out.push_back(central_crop(in(0), s.fraction)); break;
    case HostOp::expand_dims: out.push_back(expand_dims(in(0), s.axis)); break;
    case HostOp::squeeze: out.push_back(squeeze(in(0), s.size)); break;
    case HostOp::reshape: out.push_back(reshape(in(0), s.size)); break;
    case HostOp::transpose: out.push_back(transpose(in(0), s.size)); break;
    case HostOp::concat: out.push_back(concat(all(), s.axis)); break;
    case HostOp::stack: out.push_back(stack(all(), s.axis)); break;
    case HostOp::unstack: out = unstack(in(0), s.axis); break;
    case HostOp::cast: out.push_back(cast(in(0), s.to_dtype)); break;
  }
  if (out.size() != s.outputs.size())
    KILN_THROW(ConfigError) << "[" << op_name(s.op) << "] gave " << out.size() << " values; its plan expects "
                            << s.outputs.size();
  for (size_t i = 0; i < out.size(); ++i) slots[static_cast<size_t>(s.outputs[i])] = std::move(out[i]);
}

std::optional<std::vector<HostValue>> ElementPlan::run(std::vector<HostValue> element, uint64_t position,
                                                       uint64_t rank) const {
  if (static_cast<int>(element.size()) != spec_.element_slots)
    KILN_THROW(ConfigError) << "[Dataset.map] an element of " << element.size() << " components; the plan takes "
                            << spec_.element_slots;
  std::vector<HostValue> slots(static_cast<size_t>(spec_.slots));
  for (size_t i = 0; i < element.size(); ++i) slots[i] = std::move(element[i]);
  if (spec_.random_slots >= 0) {
    const size_t r = static_cast<size_t>(spec_.random_slots);
    slots[r] = int64_value(static_cast<int64_t>(spec_.seed % (uint64_t{1} << 63)), {});
    slots[r + 1] = int64_value(static_cast<int64_t>(position), {});
    slots[r + 2] = int64_value(static_cast<int64_t>(rank), {});
  }
  for (const PlanStep& s : spec_.steps) run_step(s, slots, position, rank);
  std::vector<Array> feeds;
  for (const GraphInput& in : spec_.inputs) {
    const HostValue& v = slots.at(static_cast<size_t>(in.slot));
    if (v.is_bytes || !v.data)
      KILN_THROW(ConfigError) << "[Dataset.map] graph input slot " << in.slot << " holds bytes, not numbers";
    if (v.shape != in.shape) return std::nullopt;
    feeds.push_back(graph_value(v, in.dtype));
  }
  std::vector<Array> results;
  bool graph_outputs = false;
  for (const PlanOutput& o : spec_.outputs) graph_outputs = graph_outputs || o.from_graph;
  if (graph_outputs) results = graph_(std::move(feeds));
  std::vector<HostValue> out;
  for (const PlanOutput& o : spec_.outputs) {
    if (!o.from_graph) {
      out.push_back(slots.at(static_cast<size_t>(o.index)));
      continue;
    }
    HostValue v = host_value(results.at(static_cast<size_t>(o.index)));
    out.push_back(o.dtype.empty() ? std::move(v) : cast(v, o.dtype));
  }
  return out;
}

}  // namespace kiln::data
