// A Dataset.map function's element loop in C++: the host ops kiln.data recorded while
// tracing the function (parse a tf.train.Example, decode a JPEG or PNG, convert, crop,
// flip and resize a decoded image, Inception's distorted-box crop, and the numpy ops on
// small values that feed them: data/host_ops/) and then its graph, run for one element
// with no Python. The
// Python side (kiln/_src/map_function.py) builds a plan from a trace whose host ops all have a
// form here, and runs elements through it on an ElementRunner's threads
// (data/element_runner.h); anything else keeps the Python element loop. Both loops call
// the same decoders and draw the same numbers (data/host_draws.h), so an element's values
// are the same bits either way.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/host_ops/distorted_box.h"
#include "data/host_ops/resize.h"
#include "data/host_value.h"
#include "formats/example.h"
#include "kiln/ir/array.h"

namespace kiln::data {

enum class HostOp {
  parse_example, decode_jpeg, decode_png, decode_raw, convert_image, random_crop, random_flip,  // images
  jpeg_shape, decode_and_crop_jpeg, distorted_box, resize, central_crop,                         // Inception crops
  expand_dims, squeeze, reshape, transpose, concat, stack, unstack, cast                         // small values
};

struct PlanStep {
  HostOp op = HostOp::decode_jpeg;
  std::vector<int> inputs;   // slots read
  std::vector<int> outputs;  // slots written
  // random ops: the op's index among the function's random host ops, and its seed (-1: none)
  int64_t draw_index = -1, draw_seed = -1;
  std::vector<formats::FeatureSpec> features;  // parse_example (fixed_len; var_len of numbers)
  int channels = 0;                            // decode_*
  std::string dct;                             // decode_jpeg
  bool fancy_upscaling = true;                 // decode_jpeg
  bool sixteen_bit = false;                    // decode_png
  std::string to_dtype;  // convert_image: "f4"; decode_raw: the values' dtype; cast, jpeg_shape: the result's
  std::string type_name;                       // decode_raw: TensorFlow's name of to_dtype, for errors
  bool little_endian = true;                   // decode_raw
  int64_t fixed_length = -1;                   // decode_raw: bytes kept (cut or zero-padded), or -1
  std::vector<int64_t> size;  // random_crop: the window; reshape: the shape; transpose: perm; squeeze: axes
  int axis_index = 0;         // random_flip: 0 up-down, 1 left-right (of HWC)
  int64_t axis = 0;           // expand_dims, concat, stack, unstack
  double fraction = 1.0;      // central_crop
  ResizeSpec resize;          // resize
  std::string op_name;        // resize: the Python op's name, for errors
  DistortedBoxSettings box;   // distorted_box
};

struct GraphInput {
  int slot = 0;
  DType dtype = DType::f32;
  Shape shape;
};

// The graph's run: inputs in GraphInput order -> its outputs. Called from several threads.
using GraphRun = std::function<std::vector<Array>(std::vector<Array>)>;

struct PlanOutput {
  bool from_graph = false;
  int index = 0;        // graph output, or slot
  std::string dtype;    // a graph output's numpy code when it stands for a narrower type ("u1": a
                        // uint8 image held in int32 by the graph), else empty
};

class ElementPlan {
 public:
  struct Spec {
    int element_slots = 0;  // slots 0 .. element_slots-1 hold the element's leaves
    int slots = 0;
    std::vector<PlanStep> steps;
    std::vector<GraphInput> inputs;
    int random_slots = -1;  // seed, position, rank fed to the graph's random ops from here on, or -1
    uint64_t seed = 0;
    std::vector<PlanOutput> outputs;
  };
  ElementPlan(Spec spec, GraphRun graph);

  // The function's result leaves for one element, or nullopt when a host result's shape
  // is not the one the graph was traced for (the caller traces again). Errors of the host
  // ops (a damaged JPEG, a record that is not an Example) are thrown as the ops throw them.
  std::optional<std::vector<HostValue>> run(std::vector<HostValue> element, uint64_t position, uint64_t rank) const;

 private:
  void run_step(const PlanStep& s, std::vector<HostValue>& slots, uint64_t position, uint64_t rank) const;
  Spec spec_;
  GraphRun graph_;
};

}  // namespace kiln::data
