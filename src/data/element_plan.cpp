#include "data/element_plan.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "data/host_draws.h"
#include "formats/image_decode.h"
#include "kiln/error.h"

namespace kiln::data {

size_t host_itemsize(const std::string& dtype) {
  if (dtype == "u1" || dtype == "i1" || dtype == "b1") return 1;
  if (dtype == "u2" || dtype == "i2" || dtype == "f2") return 2;
  if (dtype == "i4" || dtype == "f4") return 4;
  if (dtype == "i8" || dtype == "f8") return 8;
  KILN_THROW(ConfigError) << "[Dataset.map] a host value of dtype '" << dtype
                          << "'; the C++ element loop holds u1 u2 i1 i2 i4 i8 f2 f4 f8 b1";
}

HostValue HostValue::of_bytes(std::string b) {
  HostValue v;
  v.is_bytes = true;
  v.bytes = std::move(b);
  return v;
}

HostValue HostValue::numeric(std::string dtype, std::vector<int64_t> shape) {
  HostValue v;
  v.dtype = std::move(dtype);
  v.shape = std::move(shape);
  v.data = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(v.numel()) * host_itemsize(v.dtype));
  return v;
}

int64_t HostValue::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t HostValue::itemsize() const { return host_itemsize(dtype); }

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

HostValue image_value(formats::Image&& img) {
  const std::vector<int64_t> shape{img.height, img.width, img.channels};
  HostValue v;
  v.shape = shape;
  if (img.bits == 16) {
    v.dtype = "u2";
    v.data = std::make_shared<std::vector<uint8_t>>(img.pixels16.size() * 2);
    std::memcpy(v.data->data(), img.pixels16.data(), v.data->size());
  } else {
    v.dtype = "u1";
    v.data = std::make_shared<std::vector<uint8_t>>(std::move(img.pixels));
  }
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
    HostValue v = HostValue::numeric(floats ? "f4" : "i8", f.shape);
    const size_t n = static_cast<size_t>(v.numel()) * v.itemsize();
    std::memcpy(v.raw(), floats ? static_cast<const void*>(parsed[i].floats.data()) : parsed[i].ints.data(), n);
    out.push_back(std::move(v));
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

template <class T>
void scale_to_unit(const HostValue& x, float* out, float scale) {
  const T* in = reinterpret_cast<const T*>(x.raw());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = static_cast<float>(in[i]) * scale;
}

// convert_image_dtype of an integer image to float32: x * (1 / MAX) in float32, as the
// graph form computes and kiln/image.py's host form does.
HostValue convert(const PlanStep& s, const HostValue& x) {
  if (x.dtype == s.to_dtype) return x;
  if (s.to_dtype != "f4") KILN_THROW(ConfigError) << "[convert_image_dtype] to " << s.to_dtype << " on the host";
  HostValue v = HostValue::numeric("f4", x.shape);
  float* out = reinterpret_cast<float*>(v.raw());
  if (x.dtype == "u1") scale_to_unit<uint8_t>(x, out, static_cast<float>(1.0 / 255));
  else if (x.dtype == "u2") scale_to_unit<uint16_t>(x, out, static_cast<float>(1.0 / 65535));
  else if (x.dtype == "i1") scale_to_unit<int8_t>(x, out, static_cast<float>(1.0 / 127));
  else if (x.dtype == "i2") scale_to_unit<int16_t>(x, out, static_cast<float>(1.0 / 32767));
  else if (x.dtype == "i4") scale_to_unit<int32_t>(x, out, static_cast<float>(1.0 / 2147483647));
  else if (x.dtype == "f2") scale_to_unit<_Float16>(x, out, 1.0f);  // floats to float32: a plain conversion
  else if (x.dtype == "f8") scale_to_unit<double>(x, out, 1.0f);
  else KILN_THROW(ConfigError) << "[convert_image_dtype] of " << x.dtype << " to f4 on the host";
  return v;
}

// The window begin .. begin+size of x (every axis), contiguous. Trailing axes the window
// spans whole join the innermost partial one in a single copy per row (a crop of HWC
// copies one run of width * channels values per image row).
HostValue window(const HostValue& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& size) {
  HostValue v = HostValue::numeric(x.dtype, size);
  const size_t item = x.itemsize();
  const size_t rank = x.shape.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * x.shape[d];
  size_t inner = rank - 1;  // the run: axes inner.. (those after it whole)
  while (inner > 0 && size[inner] == x.shape[inner]) --inner;
  const size_t run = static_cast<size_t>(size[inner] * stride[inner]) * item;
  int64_t rows = 1;
  for (size_t d = 0; d < inner; ++d) rows *= size[d];
  std::vector<int64_t> at(inner, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += (begin[d] + (d < inner ? at[d] : 0)) * stride[d];
    std::memcpy(v.raw() + static_cast<size_t>(r) * run, x.raw() + static_cast<size_t>(offset) * item, run);
    for (size_t d = inner; d-- > 0;) {
      if (++at[d] < size[d]) break;
      at[d] = 0;
    }
  }
  return v;
}

HostValue random_crop(const PlanStep& s, const HostValue& x, HostDraws& draws) {
  bool fits = s.size.size() == x.shape.size() && !x.shape.empty();
  for (size_t d = 0; fits && d < s.size.size(); ++d) fits = s.size[d] >= 1 && s.size[d] <= x.shape[d];
  if (!fits) {
    auto list = [](const std::vector<int64_t>& v) {
      std::string t = "[";
      for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + std::to_string(v[i]);
      return t + "]";
    };
    KILN_THROW(ConfigError) << "[random_crop] size " << list(s.size) << " must have one entry per axis of the value's shape "
                            << list(x.shape) << ", each from 1 to that axis' size";
  }
  std::vector<int64_t> begin;
  for (size_t d = 0; d < s.size.size(); ++d) begin.push_back(draws.integer(0, x.shape[d] - s.size[d] + 1));
  return window(x, begin, s.size);
}

template <size_t P>
void mirror_pixels(uint8_t* out, const uint8_t* in, int64_t w) {
  for (int64_t x = 0; x < w; ++x) std::memcpy(out + x * P, in + (w - 1 - x) * P, P);
}

// A row of w pixels of `pixel` bytes, right to left (a fixed-size copy per pixel for the
// usual sizes: one to four channels of 8-bit, 16-bit or float samples).
void mirror_row(uint8_t* out, const uint8_t* in, int64_t w, size_t pixel) {
  switch (pixel) {
    case 1: return mirror_pixels<1>(out, in, w);
    case 2: return mirror_pixels<2>(out, in, w);
    case 3: return mirror_pixels<3>(out, in, w);
    case 4: return mirror_pixels<4>(out, in, w);
    case 6: return mirror_pixels<6>(out, in, w);
    case 8: return mirror_pixels<8>(out, in, w);
    case 12: return mirror_pixels<12>(out, in, w);
    case 16: return mirror_pixels<16>(out, in, w);
    default:
      for (int64_t x = 0; x < w; ++x) std::memcpy(out + x * pixel, in + static_cast<size_t>(w - 1 - x) * pixel, pixel);
  }
}

// Reverses axis `axis` of image `i` (of `images` stacked along a leading axis, or the one image).
void flip_image(HostValue& v, const HostValue& x, int64_t i, int axis) {
  const size_t item = x.itemsize();
  const size_t r = x.shape.size();
  const int64_t h = x.shape[r - 3], w = x.shape[r - 2], c = x.shape[r - 1];
  const size_t pixel = static_cast<size_t>(c) * item, row = static_cast<size_t>(w) * pixel;
  const uint8_t* in = x.raw() + static_cast<size_t>(i * h) * row;
  uint8_t* out = v.raw() + static_cast<size_t>(i * h) * row;
  for (int64_t y = 0; y < h; ++y) {
    if (axis == 0) {
      std::memcpy(out + static_cast<size_t>(y) * row, in + static_cast<size_t>(h - 1 - y) * row, row);
      continue;
    }
    mirror_row(out + static_cast<size_t>(y) * row, in + static_cast<size_t>(y) * row, w, pixel);
  }
}

HostValue random_flip(const PlanStep& s, const HostValue& x, HostDraws& draws) {
  if (x.shape.size() != 3 && x.shape.size() != 4)
    KILN_THROW(ConfigError) << "[random_flip] takes an image [height, width, channels] or a batch of them; the value has "
                            << x.shape.size() << " axes";
  const int64_t images = x.shape.size() == 4 ? x.shape[0] : 1;
  std::vector<bool> mirror;
  for (int64_t i = 0; i < images; ++i) mirror.push_back(draws.uniform() < 0.5);
  if (images == 1 && x.shape.size() == 3 && !mirror[0]) return x;
  HostValue v = HostValue::numeric(x.dtype, x.shape);
  const size_t per_image = static_cast<size_t>(x.numel() / images) * x.itemsize();
  for (int64_t i = 0; i < images; ++i) {
    if (mirror[static_cast<size_t>(i)]) flip_image(v, x, i, s.axis_index);
    else std::memcpy(v.raw() + static_cast<size_t>(i) * per_image, x.raw() + static_cast<size_t>(i) * per_image, per_image);
  }
  return v;
}

template <class Dst, class Src>
void cast_all(const HostValue& x, Dst* out) {
  const Src* in = reinterpret_cast<const Src*>(x.raw());
  for (int64_t i = 0, n = x.numel(); i < n; ++i) out[i] = static_cast<Dst>(in[i]);
}

template <class Dst>
void cast_from(const HostValue& x, Dst* out) {
  const std::string& t = x.dtype;
  if (t == "u1") cast_all<Dst, uint8_t>(x, out);
  else if (t == "u2") cast_all<Dst, uint16_t>(x, out);
  else if (t == "i1") cast_all<Dst, int8_t>(x, out);
  else if (t == "i2") cast_all<Dst, int16_t>(x, out);
  else if (t == "i4") cast_all<Dst, int32_t>(x, out);
  else if (t == "i8") cast_all<Dst, int64_t>(x, out);
  else if (t == "f2") cast_all<Dst, _Float16>(x, out);
  else if (t == "f4") cast_all<Dst, float>(x, out);
  else if (t == "f8") cast_all<Dst, double>(x, out);
  else if (t == "b1") cast_all<Dst, bool>(x, out);
  else host_itemsize(t);  // throws, naming the dtype
}

// A host value as the graph input it feeds (numpy's astype to the input's dtype).
Array graph_value(const HostValue& x, DType dtype) {
  Array a = Array::uninitialized(dtype, x.shape);
  switch (dtype) {
    case DType::f32: cast_from(x, a.data<float>()); break;
    case DType::f16: cast_from(x, a.data<_Float16>()); break;
    case DType::i32: cast_from(x, a.data<int32_t>()); break;
    case DType::i64: cast_from(x, a.data<int64_t>()); break;
    case DType::boolean: cast_from(x, a.data<bool>()); break;
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

HostValue int64_scalar(int64_t x) {
  HostValue v = HostValue::numeric("i8", {});
  std::memcpy(v.raw(), &x, sizeof x);
  return v;
}

}  // namespace

ElementPlan::ElementPlan(Spec spec, GraphRun graph) : spec_(std::move(spec)), graph_(std::move(graph)) {}

void ElementPlan::run_step(const PlanStep& s, std::vector<HostValue>& slots, uint64_t position, uint64_t rank) const {
  auto draws = [&] {  // a random op's generator; the others draw nothing
    return HostDraws(spec_.seed, position, rank, static_cast<uint64_t>(s.draw_index), s.draw_seed);
  };
  std::vector<HostValue> out;
  switch (s.op) {
    case HostOp::parse_example: out = parse(s, bytes_input(slots, s.inputs[0], s.op)); break;
    case HostOp::decode_jpeg:
      out.push_back(image_value(formats::decode_jpeg(bytes_input(slots, s.inputs[0], s.op), s.channels, s.dct,
                                                     s.fancy_upscaling)));
      break;
    case HostOp::decode_png:
      out.push_back(image_value(formats::decode_png(bytes_input(slots, s.inputs[0], s.op), s.channels, s.sixteen_bit)));
      break;
    case HostOp::decode_raw: out.push_back(decode_raw(s, bytes_input(slots, s.inputs[0], s.op))); break;
    case HostOp::convert_image: out.push_back(convert(s, numeric_input(slots, s.inputs[0], s.op))); break;
    case HostOp::random_crop: {
      HostDraws d = draws();
      out.push_back(random_crop(s, numeric_input(slots, s.inputs[0], s.op), d));
      break;
    }
    case HostOp::random_flip: {
      HostDraws d = draws();
      out.push_back(random_flip(s, numeric_input(slots, s.inputs[0], s.op), d));
      break;
    }
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
    slots[r] = int64_scalar(static_cast<int64_t>(spec_.seed % (uint64_t{1} << 63)));
    slots[r + 1] = int64_scalar(static_cast<int64_t>(position));
    slots[r + 2] = int64_scalar(static_cast<int64_t>(rank));
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
  for (const PlanOutput& o : spec_.outputs)
    out.push_back(o.from_graph ? host_value(results.at(static_cast<size_t>(o.index)))
                               : slots.at(static_cast<size_t>(o.index)));
  return out;
}

}  // namespace kiln::data
