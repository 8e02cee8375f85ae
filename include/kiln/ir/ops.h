// The graph builder: write models naturally,
//   Graph g;
//   Tensor x = placeholder(g, "x", DType::f32, {256, 784});
//   Tensor w1 = variable(g, "w1", DType::f32, {784, 1024}, Init::glorot_uniform(1));
//   Tensor h = relu(matmul(x, w1) + b1);
// Each call appends a node to the tensor's graph; shape or type errors throw GraphError
// at the call that made them. Composite ops (softmax, cross-entropy, ...) expand to
// primitives here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/array.h"
#include "kiln/ir/graph.h"

namespace kiln {

// A handle to a value in a graph under construction.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Graph* g, ValueId id) : g_(g), id_(id) {}
  Graph& graph() const { return *g_; }
  ValueId id() const { return id_; }
  const Node& node() const { return g_->node(id_); }
  DType dtype() const { return node().dtype; }
  // A copy: references into a graph do not survive the graph growing.
  Shape shape() const { return node().shape; }
  int64_t dim(int64_t axis) const;  // negative counts from the end
  size_t rank() const { return shape().size(); }
  // Names this value so hooks and outputs can refer to it; returns *this.
  Tensor named(const std::string& name) const;
  bool valid() const { return g_ != nullptr; }

 private:
  Graph* g_ = nullptr;
  ValueId id_ = -1;
};

// How a variable gets its first value. Seeds make initialisation reproducible across
// machines (kiln uses its own generator, not the C++ library's distributions).
//
// The fan-based kinds (glorot_*, he_*, variance_scaling) read fan_in and fan_out from the
// shape. Rank 0: 1 and 1; rank 1: both the extent; rank 2 [in, out]; higher ranks follow
// `layout`: "OIHW" (kiln's convolution filters [out, in, kh, kw], the default) or "HWIO"
// (TensorFlow's [kh, kw, in, out], what TensorFlow's initialisers assume for every
// kernel of rank > 2): fan_in = in * receptive field, fan_out = out * receptive field.
struct Init {
  // zeros, constant, uniform, normal, truncated_normal, glorot_uniform, glorot_normal,
  // he_uniform, he_normal, variance_scaling, values
  std::string kind = "zeros";
  double a = 0;                // constant: value; uniform: low; (truncated_)normal: mean; variance_scaling: scale
  double b = 0;                // uniform: high; (truncated_)normal: stddev
  int64_t seed = 0;
  std::string layout = {};     // "" or "OIHW" (the default), "HWIO"
  // variance_scaling (TensorFlow's VarianceScaling): n = fan_in, fan_out or their mean
  // (mode fan_in, fan_out, fan_avg); distribution uniform: U(-sqrt(3 scale/n), +...);
  // truncated_normal: N(0, sqrt(scale/n)/0.87962566103423978) cut at 2 standard
  // deviations; untruncated_normal: N(0, sqrt(scale/n)).
  std::string mode = {};
  std::string distribution = {};
  std::string data = {};       // values: every element as a float64 in hex (encode_values)

  static Init zeros() { return {}; }
  static Init constant(double v) { return {"constant", v, 0, 0}; }
  static Init uniform(double low, double high, int64_t seed) { return {"uniform", low, high, seed}; }
  static Init normal(double mean, double stddev, int64_t seed) { return {"normal", mean, stddev, seed}; }
  // N(mean, stddev) with draws beyond 2 standard deviations drawn again (TensorFlow's
  // truncated_normal).
  static Init truncated_normal(double mean, double stddev, int64_t seed) { return {"truncated_normal", mean, stddev, seed}; }
  static Init glorot_uniform(int64_t seed) { return {"glorot_uniform", 0, 0, seed}; }
  static Init glorot_normal(int64_t seed) { return {"glorot_normal", 0, 0, seed}; }
  static Init he_uniform(int64_t seed) { return {"he_uniform", 0, 0, seed}; }
  static Init he_normal(int64_t seed) { return {"he_normal", 0, 0, seed}; }
  static Init variance_scaling(double scale, std::string mode, std::string distribution, int64_t seed) {
    return {"variance_scaling", scale, 0, seed, {}, std::move(mode), std::move(distribution)};
  }
  // Exactly these values (of the variable's shape; TensorFlow's Variable(initial_value)).
  static Init values(const Array& v);
  // The same initialiser for a kernel of another layout (see `layout`).
  Init with_layout(std::string l) const {
    Init i = *this;
    i.layout = std::move(l);
    return i;
  }
};

// Sources
Tensor placeholder(Graph& g, const std::string& name, DType dtype, Shape shape);
Tensor variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init = {});
// A variable (attribute local=1) that holds state of one train() call only, as
// TensorFlow's local variables do (the running totals of tf.metrics): not saved in
// checkpoints, and set to its initial value at the start of every train().
Tensor local_variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init = {});
bool is_local_variable(const Node& n);
// A variable (attribute trainable=0) that minimize() leaves to the graph's own updates, as
// TensorFlow's trainable=False: batch normalization's moving statistics, say. Saved in
// checkpoints like any other.
Tensor non_trainable_variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init = {});
// What Optimizer::minimize trains when it is given no variables: float variables that are
// neither local nor non-trainable.
bool is_trainable_variable(const Node& n);
Tensor constant(Graph& g, double value, DType dtype = DType::f32, Shape shape = {});
// A scalar constant in x's graph with x's dtype.
Tensor scalar_like(const Tensor& x, double value);
// A hyperparameter: a scalar constant (runtime=1) whose value is an input of a compiled
// step rather than part of its code, so that graphs differing only in such values (a
// learning-rate sweep, another run length under a cosine schedule) share one compiled
// step in the compile cache. Graph rewrites never fold or merge it; the interpreter
// treats it as any constant.
Tensor hyperparameter(Graph& g, double value, DType dtype = DType::f32);
// Is n such a constant (a scalar hyperparameter, or an array constant_values)?
bool is_hyperparameter(const Node& n);
// A constant of differing values (a learning-rate table, a mask): `values` (its dtype and
// shape) kept in the graph as its `data` attribute, every element as a float64 in hex, and
// fed to the compiled step at run time like a hyperparameter, so that the code (and the
// cache key) do not depend on the values. Integer values beyond 2^53 are refused.
Tensor constant_values(Graph& g, const Array& values);
// The values of a constant node: `data` decoded, or `value` repeated.
Array constant_array(const Node& n);
// The `data` text of constants and Init::values: each element as a float64 in hex.
// decode_values fills `out` (its dtype and shape set), GraphError if the text does not fit.
std::string encode_values(const Array& values);
void decode_values(const std::string& data, Array& out, const std::string& context);

Tensor cast(const Tensor& x, DType dtype);
Tensor stop_gradient(const Tensor& x);

// Elementwise unary
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact: x * Phi(x)
Tensor erf(const Tensor& x);
// Cosine in radians (for schedules such as the cosine learning-rate decay).
Tensor cos(const Tensor& x);
Tensor square(const Tensor& x);  // x * x

// Elementwise binary, NumPy broadcasting; both inputs must have the same dtype. Integer
// arithmetic wraps around (two's complement); integer division truncates toward zero and
// gives 0 for a zero divisor (a compiled step cannot stop halfway to report it).
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& b);
// gy * d/dx gelu(x) = gy * (Phi(x) + x * phi(x)) for floats, computed in float32 and rounded
// once (gelu's gradient; one op, so a low-precision step does not round each part).
Tensor gelu_grad(const Tensor& x, const Tensor& gy);
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);

// Reductions; axes may be negative; empty axes = all axes.
Tensor reduce_sum(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor reduce_mean(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor reduce_max(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);

// Layout
Tensor reshape(const Tensor& x, Shape shape);  // one extent may be -1
Tensor transpose(const Tensor& x, std::vector<int64_t> perm);
Tensor broadcast_to(const Tensor& x, Shape shape);
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end);
Tensor pad(const Tensor& x, std::vector<int64_t> low, std::vector<int64_t> high);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
// Sums x down to `shape` over broadcast axes (the inverse of broadcasting).
Tensor sum_to(const Tensor& x, Shape shape);  // by value: callers pass shapes of graph nodes

// Linear algebra and convolution. matmul: [..., M, K] x [..., K, N], equal batch dims.
// matmul(one_hot(ids), w), 2-D (the one_hot possibly sliced or reshaped on its other axes,
// as tf.unstack does over time steps), is built as a lenient gather of w's rows at ids:
// the same values (a one-hot row picks a row exactly, an index out of range gives zeros)
// without the one-hot tensor or the multiplication by zeros, and a scatter_add for a
// gradient. Character models feed their inputs this way.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// NCHW input, OIHW filter, symmetric zero padding (h, w). With groups > 1 the filter is
// [o, c / groups, kh, kw] and output channel k reads the input channels of group
// k / (o / groups) only (groups = c: a depthwise convolution).
Tensor conv2d(const Tensor& x, const Tensor& w, std::vector<int64_t> stride = {1, 1},
              std::vector<int64_t> padding = {0, 0}, int64_t groups = 1);
Tensor max_pool2d(const Tensor& x, std::vector<int64_t> window, std::vector<int64_t> stride,
                  std::vector<int64_t> padding = {0, 0});
// Padded positions are not counted in the average.
Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> window, std::vector<int64_t> stride,
                  std::vector<int64_t> padding = {0, 0});

// Composites
Tensor softmax(const Tensor& x, int64_t axis = -1);
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// Per-example loss for logits [N, C] and integer labels [N] in 0..C-1: shape [N].
Tensor sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels);
// A row of zeros for an index outside 0..depth-1 (TensorFlow's one_hot). `strict`: such an
// index is an error of the input, checked where batches are fed (ir/index_bounds.h), as
// TensorFlow's sparse cross-entropy and gather raise on one.
Tensor one_hot(const Tensor& indices, int64_t depth, DType dtype = DType::f32, bool strict = false);
// Rows of params [V, ...] at integer indices of any shape: [indices..., params[1:]...]
// (an embedding lookup, TensorFlow's tf.gather on axis 0). An index outside 0..V-1 gives
// a row of zeros, as one_hot does. Its gradient is scatter_add, not one_hot x matmul.
Tensor gather(const Tensor& params, const Tensor& indices);
// The sum of each row of updates [indices..., D...] into row indices[i] of a [rows, D...]
// zero tensor (tf.math.unsorted_segment_sum); out-of-range indices are dropped.
Tensor scatter_add(const Tensor& updates, const Tensor& indices, int64_t rows);
Tensor argmax(const Tensor& x, int64_t axis = -1);

// Random draws (f32, `shape`) of `distribution` ("uniform" in [0, 1), "normal",
// "truncated_normal" cut at 2 standard deviations) from i64 scalars seed, step and rank
// and the op's `stream`: a pure function of them and of each element's index (ir/philox.h),
// so a run is reproducible from its seed, a resumed run continues exactly (step is the
// global step), ranks differ (rank), and both backends give the same bits. No gradient.
Tensor random(const Tensor& seed, const Tensor& step, const Tensor& rank, Shape shape, const std::string& distribution,
              int64_t stream);

// Data parallelism: the elementwise sum of x over the `world_size` ranks of the job
// (kiln::World); runs only in a world of that size. minimize() inserts it.
Tensor all_reduce(const Tensor& x, int64_t world_size);
// Several tensors of one type in one collective (a bucket): their elements, flattened and
// concatenated in order, summed over the ranks. Built by passes::bucket_all_reduces.
Tensor all_reduce(const std::vector<Tensor>& xs, int64_t world_size);

// State
Tensor assign(const Tensor& var, const Tensor& value);
// The step counter: an i64 scalar variable named "global_step" (created once per graph).
Tensor global_step(Graph& g);
// assign(global_step, global_step + 1).
Tensor increment_global_step(Graph& g);

}  // namespace kiln
