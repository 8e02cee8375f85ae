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

#include "kiln/graph.h"

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
struct Init {
  std::string kind = "zeros";  // zeros, constant, uniform, normal, glorot_uniform, glorot_normal, he_uniform, he_normal
  double a = 0;                // constant: value; uniform: low; normal: mean
  double b = 0;                // uniform: high; normal: stddev
  int64_t seed = 0;

  static Init zeros() { return {}; }
  static Init constant(double v) { return {"constant", v, 0, 0}; }
  static Init uniform(double low, double high, int64_t seed) { return {"uniform", low, high, seed}; }
  static Init normal(double mean, double stddev, int64_t seed) { return {"normal", mean, stddev, seed}; }
  static Init glorot_uniform(int64_t seed) { return {"glorot_uniform", 0, 0, seed}; }
  static Init glorot_normal(int64_t seed) { return {"glorot_normal", 0, 0, seed}; }
  static Init he_uniform(int64_t seed) { return {"he_uniform", 0, 0, seed}; }
  static Init he_normal(int64_t seed) { return {"he_normal", 0, 0, seed}; }
};

// Sources
Tensor placeholder(Graph& g, const std::string& name, DType dtype, Shape shape);
Tensor variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init = {});
Tensor constant(Graph& g, double value, DType dtype = DType::f32, Shape shape = {});
// A scalar constant in x's graph with x's dtype.
Tensor scalar_like(const Tensor& x, double value);
// A hyperparameter: a scalar constant (runtime=1) whose value is an input of a compiled
// step rather than part of its code, so that graphs differing only in such values (a
// learning-rate sweep, another run length under a cosine schedule) share one compiled
// step in the compile cache. Graph rewrites never fold or merge it; the interpreter
// treats it as any constant.
Tensor hyperparameter(Graph& g, double value, DType dtype = DType::f32);
// Is n such a constant?
bool is_hyperparameter(const Node& n);

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
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
// NCHW input, OIHW filter, symmetric zero padding (h, w).
Tensor conv2d(const Tensor& x, const Tensor& w, std::vector<int64_t> stride = {1, 1},
              std::vector<int64_t> padding = {0, 0});
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
Tensor one_hot(const Tensor& indices, int64_t depth, DType dtype = DType::f32);
// Rows of params [V, ...] at integer indices of any shape: [indices..., params[1:]...]
// (an embedding lookup, TensorFlow's tf.gather on axis 0). An index outside 0..V-1 gives
// a row of zeros, as one_hot does. Its gradient is scatter_add, not one_hot x matmul.
Tensor gather(const Tensor& params, const Tensor& indices);
// The sum of each row of updates [indices..., D...] into row indices[i] of a [rows, D...]
// zero tensor (tf.math.unsorted_segment_sum); out-of-range indices are dropped.
Tensor scatter_add(const Tensor& updates, const Tensor& indices, int64_t rows);
Tensor argmax(const Tensor& x, int64_t axis = -1);

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
