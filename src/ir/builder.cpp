#include "kiln/base/error.h"
#include "kiln/ir/ops.h"

#include <cstring>

namespace kiln {
namespace {

Tensor make(Graph& g, Op op, std::vector<ValueId> inputs, Attrs attrs = {}) {
  return Tensor(&g, g.add(op, std::move(inputs), std::move(attrs)));
}

Graph& same_graph(const Tensor& a, const Tensor& b, const char* op) {
  KILN_CHECK(a.valid() && b.valid()) << op << ": uninitialised Tensor";
  if (&a.graph() != &b.graph()) KILN_THROW(GraphError) << "[" << op << "] inputs belong to different graphs";
  return a.graph();
}

// An op of one or more inputs (concat, a bucket's all_reduce): all of one graph.
Tensor variadic(Op op, const std::vector<Tensor>& xs, Attrs attrs) {
  const std::string name(op_name(op));
  if (xs.empty()) KILN_THROW(GraphError) << "[" << name << "] needs at least one input";
  std::vector<ValueId> ids;
  for (const Tensor& x : xs) {
    same_graph(xs[0], x, name.c_str());
    ids.push_back(x.id());
  }
  return make(xs[0].graph(), op, ids, std::move(attrs));
}

Tensor unary(Op op, const Tensor& x) {
  KILN_CHECK(x.valid()) << op_name(op) << ": uninitialised Tensor";
  return make(x.graph(), op, {x.id()});
}

Tensor binary(Op op, const Tensor& a, const Tensor& b) {
  Graph& g = same_graph(a, b, std::string(op_name(op)).c_str());
  return make(g, op, {a.id(), b.id()});
}

std::vector<int64_t> all_axes_if_empty(const Tensor& x, std::vector<int64_t> axes) {
  if (axes.empty())
    for (size_t i = 0; i < x.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

Tensor reduce(Op op, const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return make(x.graph(), op, {x.id()},
              {{"axes", all_axes_if_empty(x, std::move(axes))}, {"keepdims", int64_t{keepdims}}});
}

// The element count of a shape that may be unchecked yet (-1 when it overflows or is negative).
int64_t numel_checked(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

bool one_of(const std::string& v, std::initializer_list<const char*> valid) {
  for (const char* k : valid)
    if (v == k) return true;
  return false;
}

Attrs init_attrs(DType dtype, const Shape& shape, const Init& init) {
  if (!one_of(init.kind, {"zeros", "constant", "uniform", "normal", "truncated_normal", "glorot_uniform",
                          "glorot_normal", "he_uniform", "he_normal", "variance_scaling", "values"}))
    KILN_THROW(GraphError) << "[variable] unknown initialiser '" << init.kind
                           << "'; valid: zeros, constant, uniform, normal, truncated_normal, glorot_uniform, "
                              "glorot_normal, he_uniform, he_normal, variance_scaling, values";
  Attrs a{{"dtype", std::string(dtype_name(dtype))}, {"shape", shape}, {"init", init.kind}};
  if (init.kind == "constant") a.set("value", init.a);
  if (init.kind == "values") {
    if (init.data.size() != static_cast<size_t>(std::max<int64_t>(numel_checked(shape), 0)) * 16)
      KILN_THROW(GraphError) << "[variable] " << init.data.size() / 16 << " initial values for shape " << shape_str(shape);
    a.set("data", init.data);
  }
  if (init.kind == "uniform") {
    a.set("low", init.a);
    a.set("high", init.b);
  }
  if (init.kind == "normal" || init.kind == "truncated_normal") {
    if (!(init.b >= 0)) KILN_THROW(GraphError) << "[variable] " << init.kind << " stddev " << init.b << " must be >= 0";
    a.set("mean", init.a);
    a.set("stddev", init.b);
  }
  if (init.kind == "variance_scaling") {
    if (!(init.a > 0))
      KILN_THROW(GraphError) << "[variable] variance_scaling scale " << init.a << " must be > 0";
    if (!one_of(init.mode, {"fan_in", "fan_out", "fan_avg"}))
      KILN_THROW(GraphError) << "[variable] variance_scaling mode '" << init.mode << "'; valid: fan_in, fan_out, fan_avg";
    if (!one_of(init.distribution, {"uniform", "truncated_normal", "untruncated_normal"}))
      KILN_THROW(GraphError) << "[variable] variance_scaling distribution '" << init.distribution
                             << "'; valid: uniform, truncated_normal, untruncated_normal";
    a.set("scale", init.a);
    a.set("mode", init.mode);
    a.set("distribution", init.distribution);
  }
  if (!init.layout.empty() && !one_of(init.layout, {"OIHW", "HWIO"}))
    KILN_THROW(GraphError) << "[variable] layout '" << init.layout << "'; valid: OIHW (the default), HWIO";
  // Only where it changes the fans: the attribute is part of the graph (and its cache key).
  if (init.layout == "HWIO" && shape.size() > 2) a.set("layout", init.layout);
  if (init.kind != "zeros" && init.kind != "constant" && init.kind != "values") a.set("seed", init.seed);
  return a;
}

}  // namespace

Tensor random(const Tensor& seed, const Tensor& step, const Tensor& rank, Shape shape, const std::string& distribution,
              int64_t stream) {
  same_graph(seed, step, "random");
  same_graph(seed, rank, "random");
  return make(seed.graph(), Op::random, {seed.id(), step.id(), rank.id()},
              {{"dtype", std::string("f32")}, {"shape", std::move(shape)}, {"distribution", distribution}, {"stream", stream}});
}

Tensor local_variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init) {
  Attrs a = init_attrs(dtype, shape, init);
  a.set("local", int64_t{1});
  return Tensor(&g, g.add(Op::variable, {}, std::move(a), name));
}

bool is_local_variable(const Node& n) { return n.op == Op::variable && n.attrs.i_or("local", 0) != 0; }

Tensor non_trainable_variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init) {
  Attrs a = init_attrs(dtype, shape, init);
  a.set("trainable", int64_t{0});
  return Tensor(&g, g.add(Op::variable, {}, std::move(a), name));
}

bool is_trainable_variable(const Node& n) {
  return n.op == Op::variable && is_float(n.dtype) && !is_local_variable(n) && n.attrs.i_or("trainable", 1) != 0;
}

int64_t Tensor::dim(int64_t axis) const {
  const auto r = static_cast<int64_t>(rank());
  if (axis < -r || axis >= r) KILN_THROW(GraphError) << "[dim] axis " << axis << " out of range for rank " << r;
  return shape()[axis < 0 ? axis + r : axis];
}

Tensor Tensor::named(const std::string& name) const {
  g_->set_name(id_, name);
  return *this;
}

Tensor placeholder(Graph& g, const std::string& name, DType dtype, Shape shape) {
  return Tensor(&g, g.add(Op::placeholder, {}, {{"dtype", std::string(dtype_name(dtype))}, {"shape", shape}}, name));
}

Tensor variable(Graph& g, const std::string& name, DType dtype, Shape shape, Init init) {
  if (name.empty()) KILN_THROW(GraphError) << "[variable] variables must be named";
  return Tensor(&g, g.add(Op::variable, {}, init_attrs(dtype, shape, init), name));
}

Tensor constant(Graph& g, double value, DType dtype, Shape shape) {
  return make(g, Op::constant, {}, {{"dtype", std::string(dtype_name(dtype))}, {"shape", shape}, {"value", value}});
}

Tensor scalar_like(const Tensor& x, double value) { return constant(x.graph(), value, x.dtype()); }

Tensor hyperparameter(Graph& g, double value, DType dtype) {
  if (dtype == DType::boolean)
    KILN_THROW(GraphError) << "[hyperparameter] a hyperparameter is a float or integer scalar, not bool";
  if (!is_float(dtype) && (value != static_cast<double>(static_cast<int64_t>(value)) || value > 9007199254740992.0 ||
                           value < -9007199254740992.0))
    KILN_THROW(GraphError) << "[hyperparameter] an integer hyperparameter holds a whole number of at most 2^53 in "
                              "size, not "
                           << value;
  return make(g, Op::constant, {},
              {{"dtype", std::string(dtype_name(dtype))}, {"shape", Shape{}}, {"value", value}, {"runtime", int64_t{1}}});
}

bool is_hyperparameter(const Node& n) { return n.op == Op::constant && n.attrs.i_or("runtime", 0) != 0; }

std::string encode_values(const Array& values) {
  static const char* kHex = "0123456789abcdef";
  std::string data;
  data.reserve(static_cast<size_t>(values.numel()) * 16);
  for (int64_t i = 0; i < values.numel(); ++i) {
    const double v = values.get(i);
    if (!is_float(values.dtype()) && (v > 9007199254740992.0 || v < -9007199254740992.0))
      KILN_THROW(GraphError) << "[constant] integer " << static_cast<int64_t>(v) << " is beyond 2^53, which a constant "
                             << "array holds exactly";
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int s = 60; s >= 0; s -= 4) data.push_back(kHex[(bits >> s) & 0xf]);
  }
  return data;
}

void decode_values(const std::string& data, Array& out, const std::string& context) {
  auto nibble = [&](char c) -> uint64_t {
    if (c >= '0' && c <= '9') return static_cast<uint64_t>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<uint64_t>(c - 'a' + 10);
    KILN_THROW(GraphError) << "[" << context << "] data holds '" << c << "', not a hex digit";
  };
  if (data.size() != static_cast<size_t>(out.numel()) * 16)
    KILN_THROW(GraphError) << "[" << context << "] data holds " << data.size() / 16 << " values for shape "
                           << shape_str(out.shape());
  for (int64_t i = 0; i < out.numel(); ++i) {
    uint64_t bits = 0;
    for (size_t k = 0; k < 16; ++k) bits = bits << 4 | nibble(data[static_cast<size_t>(i) * 16 + k]);
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    out.set(i, v);
  }
}

Tensor constant_values(Graph& g, const Array& values) {
  return make(g, Op::constant, {},
              {{"dtype", std::string(dtype_name(values.dtype()))}, {"shape", values.shape()}, {"value", 0.0},
               {"runtime", int64_t{1}}, {"data", encode_values(values)}});
}

Array constant_array(const Node& n) {
  KILN_CHECK(n.op == Op::constant) << "not a constant: " << op_name(n.op);
  Array out(n.dtype, n.shape);
  if (n.attrs.has("data")) {
    decode_values(n.attrs.s("data"), out, "constant");
  } else {
    const double v = n.attrs.f("value");
    for (int64_t i = 0; i < out.numel(); ++i) out.set(i, v);
  }
  return out;
}

Init Init::values(const Array& v) {
  Init i;
  i.kind = "values";
  i.data = encode_values(v);
  return i;
}

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return make(x.graph(), Op::cast, {x.id()}, {{"dtype", std::string(dtype_name(dtype))}});
}
Tensor stop_gradient(const Tensor& x) { return unary(Op::stop_gradient, x); }

Tensor neg(const Tensor& x) { return unary(Op::neg, x); }
Tensor abs(const Tensor& x) { return unary(Op::abs, x); }
Tensor sign(const Tensor& x) { return unary(Op::sign, x); }
Tensor exp(const Tensor& x) { return unary(Op::exp, x); }
Tensor log(const Tensor& x) { return unary(Op::log, x); }
Tensor sqrt(const Tensor& x) { return unary(Op::sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary(Op::rsqrt, x); }
Tensor tanh(const Tensor& x) { return unary(Op::tanh, x); }
Tensor sigmoid(const Tensor& x) { return unary(Op::sigmoid, x); }
Tensor relu(const Tensor& x) { return unary(Op::relu, x); }
Tensor gelu(const Tensor& x) { return unary(Op::gelu, x); }
Tensor erf(const Tensor& x) { return unary(Op::erf, x); }
Tensor cos(const Tensor& x) { return unary(Op::cos, x); }
Tensor square(const Tensor& x) { return mul(x, x); }

Tensor add(const Tensor& a, const Tensor& b) { return binary(Op::add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(Op::sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(Op::mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary(Op::div, a, b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(Op::maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(Op::minimum, a, b); }
Tensor pow(const Tensor& a, const Tensor& b) { return binary(Op::pow, a, b); }
Tensor gelu_grad(const Tensor& x, const Tensor& gy) { return binary(Op::gelu_grad, x, gy); }
Tensor equal(const Tensor& a, const Tensor& b) { return binary(Op::equal, a, b); }
Tensor not_equal(const Tensor& a, const Tensor& b) { return binary(Op::not_equal, a, b); }
Tensor less(const Tensor& a, const Tensor& b) { return binary(Op::less, a, b); }
Tensor less_equal(const Tensor& a, const Tensor& b) { return binary(Op::less_equal, a, b); }
Tensor greater(const Tensor& a, const Tensor& b) { return binary(Op::greater, a, b); }
Tensor greater_equal(const Tensor& a, const Tensor& b) { return binary(Op::greater_equal, a, b); }
Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Graph& g = same_graph(cond, a, "select");
  same_graph(a, b, "select");
  return make(g, Op::select, {cond.id(), a.id(), b.id()});
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor operator-(const Tensor& a, double b) { return sub(a, scalar_like(a, b)); }
Tensor operator*(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }
Tensor operator/(const Tensor& a, double b) { return div(a, scalar_like(a, b)); }
Tensor operator+(double a, const Tensor& b) { return add(scalar_like(b, a), b); }
Tensor operator-(double a, const Tensor& b) { return sub(scalar_like(b, a), b); }
Tensor operator*(double a, const Tensor& b) { return mul(scalar_like(b, a), b); }
Tensor operator/(double a, const Tensor& b) { return div(scalar_like(b, a), b); }

Tensor reduce_sum(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce(Op::reduce_sum, x, std::move(axes), keepdims);
}
Tensor reduce_mean(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce(Op::reduce_mean, x, std::move(axes), keepdims);
}
Tensor reduce_max(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce(Op::reduce_max, x, std::move(axes), keepdims);
}

Tensor reshape(const Tensor& x, Shape shape) {
  if (shape == x.shape()) return x;
  return make(x.graph(), Op::reshape, {x.id()}, {{"shape", shape}});
}
Tensor transpose(const Tensor& x, std::vector<int64_t> perm) {
  return make(x.graph(), Op::transpose, {x.id()}, {{"perm", perm}});
}
Tensor broadcast_to(const Tensor& x, Shape shape) {
  if (shape == x.shape()) return x;
  return make(x.graph(), Op::broadcast_to, {x.id()}, {{"shape", shape}});
}
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end) {
  return make(x.graph(), Op::slice, {x.id()}, {{"begin", begin}, {"end", end}});
}
Tensor pad(const Tensor& x, std::vector<int64_t> low, std::vector<int64_t> high) {
  return make(x.graph(), Op::pad, {x.id()}, {{"low", low}, {"high", high}});
}
Tensor concat(const std::vector<Tensor>& xs, int64_t axis) { return variadic(Op::concat, xs, {{"axis", axis}}); }

Tensor sum_to(const Tensor& x, Shape shape) {
  if (x.shape() == shape) return x;
  const Shape xs = x.shape();
  if (xs.size() < shape.size())
    KILN_THROW(GraphError) << "[sum_to] cannot sum " << shape_str(xs) << " to the larger rank " << shape_str(shape);
  const size_t lead = xs.size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < xs.size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && xs[i] != 1)) axes.push_back(static_cast<int64_t>(i));
  Tensor r = axes.empty() ? x : reduce_sum(x, axes, true);
  return reshape(r, shape);
}

namespace {

// The indices `a` is the one-hot encoding of, when a is one_hot(ids) of b's dtype seen
// through slices and reshapes that keep its last (depth) axis whole: the same slices and
// reshapes of ids. An invalid Tensor otherwise.
Tensor one_hot_indices(const Tensor& a, const Tensor& b) {
  Graph& g = a.graph();
  std::vector<ValueId> chain;  // from a down to the one_hot's consumer
  ValueId v = a.id();
  for (;;) {
    const Node& n = g.node(v);
    const int64_t depth = n.shape.empty() ? 0 : n.shape.back();
    if (n.op == Op::one_hot) {
      if (n.dtype != b.dtype() || depth != b.dim(0)) return {};
      break;
    }
    if (n.op == Op::reshape && (g.node(n.inputs[0]).shape.empty() || g.node(n.inputs[0]).shape.back() != depth))
      return {};
    if (n.op == Op::slice && (n.attrs.ints("begin").back() != 0 || n.attrs.ints("end").back() != depth)) return {};
    if (n.op != Op::reshape && n.op != Op::slice) return {};
    chain.push_back(v);
    v = n.inputs[0];
  }
  Tensor ids(&g, g.node(v).inputs[0]);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Node& n = g.node(*it);
    if (n.op == Op::reshape) {
      ids = reshape(ids, Shape(n.shape.begin(), n.shape.end() - 1));
    } else {
      const auto& begin = n.attrs.ints("begin");
      const auto& end = n.attrs.ints("end");
      ids = slice(ids, {begin.begin(), begin.end() - 1}, {end.begin(), end.end() - 1});
    }
  }
  return ids;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  Graph& g = same_graph(a, b, "matmul");
  if (!transpose_a && !transpose_b && a.shape().size() == 2 && b.shape().size() == 2 && a.dim(1) == b.dim(0)) {
    if (const Tensor ids = one_hot_indices(a, b); ids.valid())
      return make(g, Op::gather, {b.id(), ids.id()}, {{"lenient", int64_t{1}}});
  }
  return make(g, Op::matmul, {a.id(), b.id()},
              {{"transpose_a", int64_t{transpose_a}}, {"transpose_b", int64_t{transpose_b}}});
}

Tensor conv2d(const Tensor& x, const Tensor& w, std::vector<int64_t> stride, std::vector<int64_t> padding,
              int64_t groups) {
  Graph& g = same_graph(x, w, "conv2d");
  Attrs attrs{{"stride", stride}, {"padding", padding}};
  if (groups != 1) attrs.set("groups", groups);  // absent means 1: ungrouped graphs keep their form
  return make(g, Op::conv2d, {x.id(), w.id()}, attrs);
}
Tensor max_pool2d(const Tensor& x, std::vector<int64_t> window, std::vector<int64_t> stride,
                  std::vector<int64_t> padding) {
  return make(x.graph(), Op::max_pool2d, {x.id()}, {{"window", window}, {"stride", stride}, {"padding", padding}});
}
Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> window, std::vector<int64_t> stride,
                  std::vector<int64_t> padding) {
  return make(x.graph(), Op::avg_pool2d, {x.id()}, {{"window", window}, {"stride", stride}, {"padding", padding}});
}

Tensor softmax(const Tensor& x, int64_t axis) {
  Tensor shifted = x - stop_gradient(reduce_max(x, {axis}, true));
  Tensor e = exp(shifted);
  return e / reduce_sum(e, {axis}, true);
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  Tensor shifted = x - stop_gradient(reduce_max(x, {axis}, true));
  return shifted - log(reduce_sum(exp(shifted), {axis}, true));
}

Tensor sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  if (logits.rank() != 2 || labels.rank() != 1 || labels.dim(0) != logits.dim(0))
    KILN_THROW(GraphError) << "[sparse_softmax_cross_entropy] needs logits [N,C] and labels [N], got "
                           << shape_str(logits.shape()) << " and " << shape_str(labels.shape());
  Tensor picked = reduce_sum(one_hot(labels, logits.dim(1), logits.dtype(), /*strict=*/true) * log_softmax(logits, 1), {1});
  return -picked;
}

Tensor one_hot(const Tensor& indices, int64_t depth, DType dtype, bool strict) {
  Attrs a{{"depth", depth}, {"dtype", std::string(dtype_name(dtype))}};
  if (strict) a.set("strict", int64_t{1});
  return make(indices.graph(), Op::one_hot, {indices.id()}, std::move(a));
}
Tensor gather(const Tensor& params, const Tensor& indices) {
  return make(same_graph(params, indices, "gather"), Op::gather, {params.id(), indices.id()});
}
Tensor scatter_add(const Tensor& updates, const Tensor& indices, int64_t rows) {
  return make(same_graph(updates, indices, "scatter_add"), Op::scatter_add, {updates.id(), indices.id()},
              {{"rows", rows}});
}
Tensor all_reduce(const Tensor& x, int64_t world_size) {
  return make(x.graph(), Op::all_reduce, {x.id()}, {{"world_size", world_size}});
}
Tensor all_reduce(const std::vector<Tensor>& xs, int64_t world_size) {
  return variadic(Op::all_reduce, xs, {{"world_size", world_size}});
}
Tensor argmax(const Tensor& x, int64_t axis) { return make(x.graph(), Op::argmax, {x.id()}, {{"axis", axis}}); }

Tensor assign(const Tensor& var, const Tensor& value) {
  Graph& g = same_graph(var, value, "assign");
  return make(g, Op::assign, {var.id(), value.id()});
}

Tensor global_step(Graph& g) {
  if (auto id = g.find("global_step")) {
    if (g.node(*id).op != Op::variable)
      KILN_THROW(GraphError) << "[global_step] 'global_step' already names a " << op_name(g.node(*id).op);
    return Tensor(&g, *id);
  }
  return variable(g, "global_step", DType::i64, {}, Init::zeros());
}

Tensor increment_global_step(Graph& g) {
  Tensor step = global_step(g);
  return assign(step, step + 1.0);
}

}  // namespace kiln
