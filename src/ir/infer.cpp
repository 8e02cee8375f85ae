// Shape and dtype inference, one rule per op family (see op_list.h).
#include <algorithm>
#include <set>

#include "ir/conv_geometry.h"
#include "ir/dense_inputs.h"
#include "kiln/base/error.h"
#include "kiln/ir/graph.h"

namespace kiln {
namespace {

struct Ctx {
  const Graph& g;
  Node& n;
  std::string op() const { return std::string(op_name(n.op)); }
  const Node& in(size_t i) const { return g.node(n.inputs[i]); }
  detail::Thrower<GraphError> fail() const {
    return detail::Thrower<GraphError>("[" + op() + (n.name.empty() ? "" : " '" + n.name + "'") + "] ");
  }
};

int64_t norm_axis(const Ctx& c, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= std::max<int64_t>(r, 1)) c.fail() << "axis " << axis << " is out of range for rank " << r;
  return axis < 0 ? axis + r : axis;
}

void same_float_dtypes(const Ctx& c, DType a, DType b) {
  if (a != b)
    c.fail() << "input types differ: " << dtype_name(a) << " vs " << dtype_name(b) << " (insert a cast)";
}

void source(Ctx& c) {
  c.n.dtype = parse_dtype(c.n.attrs.s("dtype"));
  c.n.shape = c.n.attrs.ints("shape");
  for (int64_t d : c.n.shape)
    if (d < 0) c.fail() << "negative extent in shape " << shape_str(c.n.shape);
  if (c.n.op == Op::variable && !is_float(c.n.dtype) && c.n.dtype != DType::i64 && c.n.dtype != DType::i32)
    c.fail() << "variables hold float or integer values, not " << dtype_name(c.n.dtype);
}

void unary(Ctx& c) {
  c.n.dtype = c.in(0).dtype;
  c.n.shape = c.in(0).shape;
  const bool int_ok = c.n.op == Op::neg || c.n.op == Op::abs || c.n.op == Op::sign || c.n.op == Op::stop_gradient ||
                      c.n.op == Op::relu;
  if (!is_float(c.n.dtype) && !int_ok)
    c.fail() << "needs a float input (f32, f16, bf16), got " << dtype_name(c.n.dtype);
}

void binary(Ctx& c) {
  same_float_dtypes(c, c.in(0).dtype, c.in(1).dtype);
  if (c.in(0).dtype == DType::boolean) c.fail() << "arithmetic on bool values; cast them first";
  if (c.n.op == Op::gelu_grad && !is_float(c.in(0).dtype))
    c.fail() << "needs float inputs (f32, f16, bf16), got " << dtype_name(c.in(0).dtype);
  c.n.dtype = c.in(0).dtype;
  c.n.shape = broadcast_shapes(c.in(0).shape, c.in(1).shape, c.op());
}

void compare(Ctx& c) {
  same_float_dtypes(c, c.in(0).dtype, c.in(1).dtype);
  c.n.dtype = DType::boolean;
  c.n.shape = broadcast_shapes(c.in(0).shape, c.in(1).shape, c.op());
}

void select(Ctx& c) {
  if (c.in(0).dtype != DType::boolean) c.fail() << "condition must be bool, got " << dtype_name(c.in(0).dtype);
  same_float_dtypes(c, c.in(1).dtype, c.in(2).dtype);
  c.n.dtype = c.in(1).dtype;
  c.n.shape = broadcast_shapes(broadcast_shapes(c.in(0).shape, c.in(1).shape, c.op()), c.in(2).shape, c.op());
}

void reduce(Ctx& c) {
  const Shape& in = c.in(0).shape;
  std::vector<int64_t> axes = c.n.attrs.ints("axes");
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    const int64_t na = norm_axis(c, a, in.size());
    if (!seen.insert(na).second) c.fail() << "axis " << a << " appears twice";
  }
  const bool keep = c.n.attrs.i("keepdims") != 0;
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (seen.count(static_cast<int64_t>(i))) {
      if (in[i] == 0 && c.n.op == Op::reduce_max) c.fail() << "max over an empty axis " << i;
      if (keep) out.push_back(1);
    } else {
      out.push_back(in[i]);
    }
  }
  c.n.dtype = c.in(0).dtype;
  if (c.n.dtype == DType::boolean) c.fail() << "reduction of bool values; cast them first";
  c.n.shape = out;
  // Canonical form: sorted, non-negative axes.
  c.n.attrs.set("axes", std::vector<int64_t>(seen.begin(), seen.end()));
}

void reshape(Ctx& c) {
  Shape s = c.n.attrs.ints("shape");
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer_at >= 0) c.fail() << "more than one -1 in " << shape_str(s);
      infer_at = static_cast<int>(i);
    } else if (s[i] < 0) {
      c.fail() << "negative extent in " << shape_str(s);
    } else {
      known *= s[i];
    }
  }
  const int64_t total = numel(c.in(0).shape);
  if (infer_at >= 0) {
    if (known == 0 || total % known) c.fail() << "cannot reshape " << shape_str(c.in(0).shape) << " to " << shape_str(s);
    s[infer_at] = total / known;
  }
  if (numel(s) != total)
    c.fail() << "cannot reshape " << shape_str(c.in(0).shape) << " (" << total << " elements) to " << shape_str(s);
  c.n.dtype = c.in(0).dtype;
  c.n.shape = s;
  c.n.attrs.set("shape", s);
}

void transpose(Ctx& c) {
  const Shape& in = c.in(0).shape;
  const auto& perm = c.n.attrs.ints("perm");
  if (perm.size() != in.size()) c.fail() << "perm " << shape_str(perm) << " does not match rank " << in.size();
  std::vector<bool> seen(in.size());
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p]) c.fail() << "perm " << shape_str(perm) << " is not a permutation";
    seen[p] = true;
    out.push_back(in[p]);
  }
  c.n.dtype = c.in(0).dtype;
  c.n.shape = out;
}

void broadcast_to(Ctx& c) {
  const Shape& target = c.n.attrs.ints("shape");
  if (broadcast_shapes(c.in(0).shape, target, c.op()) != target)
    c.fail() << "cannot broadcast " << shape_str(c.in(0).shape) << " to " << shape_str(target);
  c.n.dtype = c.in(0).dtype;
  c.n.shape = target;
}

void slice(Ctx& c) {
  const Shape& in = c.in(0).shape;
  const auto& b = c.n.attrs.ints("begin");
  const auto& e = c.n.attrs.ints("end");
  if (b.size() != in.size() || e.size() != in.size())
    c.fail() << "begin " << shape_str(b) << " and end " << shape_str(e) << " must have rank " << in.size();
  Shape out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (b[i] < 0 || e[i] > in[i] || b[i] > e[i])
      c.fail() << "axis " << i << ": range " << b[i] << ".." << e[i] << " is not within 0.." << in[i];
    out[i] = e[i] - b[i];
  }
  c.n.dtype = c.in(0).dtype;
  c.n.shape = out;
}

void pad(Ctx& c) {
  const Shape& in = c.in(0).shape;
  const auto& lo = c.n.attrs.ints("low");
  const auto& hi = c.n.attrs.ints("high");
  if (lo.size() != in.size() || hi.size() != in.size()) c.fail() << "low and high must have rank " << in.size();
  Shape out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (lo[i] < 0 || hi[i] < 0) c.fail() << "negative padding on axis " << i;
    out[i] = in[i] + lo[i] + hi[i];
  }
  c.n.dtype = c.in(0).dtype;
  c.n.shape = out;
}

void concat(Ctx& c) {
  if (c.n.inputs.empty()) c.fail() << "needs at least one input";
  const Shape& first = c.in(0).shape;
  const int64_t axis = norm_axis(c, c.n.attrs.i("axis"), first.size());
  Shape out = first;
  out[axis] = 0;
  for (size_t k = 0; k < c.n.inputs.size(); ++k) {
    const Node& x = c.in(k);
    same_float_dtypes(c, c.in(0).dtype, x.dtype);
    if (x.shape.size() != first.size()) c.fail() << "input " << k << " has rank " << x.shape.size() << ", expected " << first.size();
    for (size_t i = 0; i < first.size(); ++i)
      if (static_cast<int64_t>(i) != axis && x.shape[i] != first[i])
        c.fail() << "input " << k << " has shape " << shape_str(x.shape) << ", incompatible with " << shape_str(first)
                 << " outside axis " << axis;
    out[axis] += x.shape[axis];
  }
  c.n.attrs.set("axis", axis);
  c.n.dtype = c.in(0).dtype;
  c.n.shape = out;
}

void matmul(Ctx& c) {
  const Shape& a = c.in(0).shape;
  const Shape& b = c.in(1).shape;
  same_float_dtypes(c, c.in(0).dtype, c.in(1).dtype);
  if (!is_float(c.in(0).dtype)) c.fail() << "needs float inputs, got " << dtype_name(c.in(0).dtype);
  if (a.size() < 2 || b.size() < 2) c.fail() << "inputs must have rank >= 2, got " << shape_str(a) << " and " << shape_str(b);
  if (a.size() != b.size()) c.fail() << "batch ranks differ: " << shape_str(a) << " vs " << shape_str(b);
  const bool ta = c.n.attrs.i("transpose_a") != 0, tb = c.n.attrs.i("transpose_b") != 0;
  const size_t r = a.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (a[i] != b[i]) c.fail() << "batch dimensions differ: " << shape_str(a) << " vs " << shape_str(b);
  const int64_t m = ta ? a[r - 1] : a[r - 2], ka = ta ? a[r - 2] : a[r - 1];
  const int64_t kb = tb ? b[r - 1] : b[r - 2], n = tb ? b[r - 2] : b[r - 1];
  if (ka != kb)
    c.fail() << "inner dimensions differ: " << shape_str(a) << (ta ? "^T" : "") << " x " << shape_str(b) << (tb ? "^T" : "")
             << " (" << ka << " vs " << kb << ")";
  Shape out(a.begin(), a.end() - 2);
  out.push_back(m);
  out.push_back(n);
  c.n.dtype = c.in(0).dtype;
  c.n.shape = out;
}

// A 2-D matmul whose result gets a bias row [n] (or [1, n]; float32 or the product's
// type) unless bias=0, and an addend of the result's shape and type if addend=1.
void dense(Ctx& c) {
  for (const char* flag : {"relu", "bias", "addend"}) {
    if (!c.n.attrs.has(flag)) continue;  // optional ones default as dense_inputs.h says
    const int64_t v = c.n.attrs.i(flag);
    if (v != 0 && v != 1) c.fail() << flag << " must be 0 or 1, got " << v;
  }
  const size_t want = 2 + dense_has_bias(c.n) + dense_has_addend(c.n);
  if (c.n.inputs.size() != want)
    c.fail() << "takes " << want << " inputs (a, b" << (dense_has_bias(c.n) ? ", bias" : "")
             << (dense_has_addend(c.n) ? ", addend" : "") << "), got " << c.n.inputs.size();
  if (c.in(0).shape.size() != 2) c.fail() << "is 2-D only, got " << shape_str(c.in(0).shape);
  matmul(c);
  const int64_t n = c.n.shape[1];
  const DenseInputs d = dense_inputs(c.n);
  if (d.bias >= 0) {
    const Node& b = c.g.node(d.bias);
    if (!(b.shape == Shape{n} || b.shape == Shape{1, n}))
      c.fail() << "bias must be [" << n << "] or [1," << n << "], got " << shape_str(b.shape);
    if (b.dtype != DType::f32 && b.dtype != c.n.dtype)
      c.fail() << "bias must be f32 or " << dtype_name(c.n.dtype) << ", got " << dtype_name(b.dtype);
  }
  if (d.addend >= 0) {
    const Node& x = c.g.node(d.addend);
    if (x.shape != c.n.shape || x.dtype != c.n.dtype)
      c.fail() << "addend must be " << dtype_name(c.n.dtype) << shape_str(c.n.shape) << ", got "
               << dtype_name(x.dtype) << shape_str(x.shape);
  }
}

// Checks n's stride and padding for a kh x kw window.
void check_window(const Ctx& c, int64_t kh, int64_t kw) {
  const auto& st = c.n.attrs.ints("stride");
  const auto& pd = c.n.attrs.ints("padding");
  if (st.size() != 2 || pd.size() != 2) c.fail() << "stride and padding need two values (h, w)";
  if (st[0] < 1 || st[1] < 1) c.fail() << "stride must be >= 1, got " << shape_str(st);
  if (pd[0] < 0 || pd[1] < 0) c.fail() << "padding must be >= 0, got " << shape_str(pd);
  if (pd[0] >= kh || pd[1] >= kw) c.fail() << "padding " << shape_str(pd) << " must be smaller than the window " << kh << "x" << kw;
}

// The output shape of a kh x kw window sliding over x and producing `channels` channels.
Shape window_out(const Ctx& c, const Shape& x, int64_t channels, int64_t kh, int64_t kw) {
  check_window(c, kh, kw);
  const ConvGeometry g = window_geometry(c.n, x, channels, kh, kw);
  if (g.h + 2 * g.ph < kh || g.w + 2 * g.pw < kw || g.oh < 1 || g.ow < 1)
    c.fail() << "window " << kh << "x" << kw << " does not fit input " << shape_str(x);
  return {g.n, g.o, g.oh, g.ow};
}

void need_rank4(const Ctx& c, const Shape& s, const char* what) {
  if (s.size() != 4) c.fail() << what << " must be 4-D (NCHW / OIHW), got " << shape_str(s);
}

// Checks a convolution's channel groups (attribute groups, 1 when absent) against the
// input's channels x_c and the filter w [o, x_c / groups, kh, kw].
void check_groups(const Ctx& c, int64_t x_c, const Shape& w) {
  const int64_t groups = c.n.attrs.i_or("groups", 1);
  if (groups < 1) c.fail() << "groups must be at least 1, got " << groups;
  if (x_c % groups != 0 || w[0] % groups != 0)
    c.fail() << "groups " << groups << " must divide the input's " << x_c << " channels and the filter's " << w[0]
             << " outputs";
  if (x_c != w[1] * groups) {
    if (groups == 1) c.fail() << "input has " << x_c << " channels but the filter " << shape_str(w) << " expects " << w[1];
    c.fail() << "input has " << x_c << " channels but the filter " << shape_str(w) << " in " << groups << " groups expects "
             << w[1] * groups << " (" << w[1] << " per group)";
  }
}

void conv2d(Ctx& c) {
  const Shape& x = c.in(0).shape;
  const Shape& w = c.in(1).shape;
  need_rank4(c, x, "input");
  need_rank4(c, w, "filter");
  same_float_dtypes(c, c.in(0).dtype, c.in(1).dtype);
  if (!is_float(c.in(0).dtype)) c.fail() << "needs float inputs";
  check_groups(c, x[1], w);
  c.n.shape = window_out(c, x, w[0], w[2], w[3]);
  c.n.dtype = c.in(0).dtype;
}

// conv2d plus a per-channel bias ([o], [o,1,1] or [1,o,1,1]), float32 or the conv's type.
void conv2d_bias(Ctx& c) {
  conv2d(c);
  const Node& b = c.in(2);
  const int64_t o = c.n.shape[1];
  if (!(b.shape == Shape{o} || b.shape == Shape{o, 1, 1} || b.shape == Shape{1, o, 1, 1}))
    c.fail() << "bias must be [" << o << "], [" << o << ",1,1] or [1," << o << ",1,1], got " << shape_str(b.shape);
  if (b.dtype != DType::f32 && b.dtype != c.n.dtype)
    c.fail() << "bias must be f32 or " << dtype_name(c.n.dtype) << ", got " << dtype_name(b.dtype);
  const int64_t relu = c.n.attrs.i("relu");
  if (relu != 0 && relu != 1) c.fail() << "relu must be 0 or 1, got " << relu;
}

void conv2d_backward_input(Ctx& c) {  // inputs: dy, w; attr input_shape
  const Shape& xs = c.n.attrs.ints("input_shape");
  need_rank4(c, xs, "input_shape");
  const Shape& w = c.in(1).shape;
  need_rank4(c, w, "filter");
  check_groups(c, xs[1], w);
  if (window_out(c, xs, w[0], w[2], w[3]) != c.in(0).shape)
    c.fail() << "gradient shape " << shape_str(c.in(0).shape) << " does not match the convolution";
  c.n.shape = xs;
  c.n.dtype = c.in(0).dtype;
}

void conv2d_backward_filter(Ctx& c) {  // inputs: x, dy; attr filter_shape
  const Shape& ws = c.n.attrs.ints("filter_shape");
  need_rank4(c, ws, "filter_shape");
  const Shape& x = c.in(0).shape;
  need_rank4(c, x, "input");
  check_groups(c, x[1], ws);
  if (window_out(c, x, ws[0], ws[2], ws[3]) != c.in(1).shape)
    c.fail() << "gradient shape " << shape_str(c.in(1).shape) << " does not match the convolution";
  c.n.shape = ws;
  c.n.dtype = c.in(0).dtype;
}

// The pooling window [kh, kw], checked.
Shape pool_window(const Ctx& c) {
  const auto& k = c.n.attrs.ints("window");
  if (k.size() != 2 || k[0] < 1 || k[1] < 1) c.fail() << "window needs two positive values, got " << shape_str(k);
  return k;
}

void pool2d(Ctx& c) {
  const Shape& x = c.in(0).shape;
  need_rank4(c, x, "input");
  if (!is_float(c.in(0).dtype)) c.fail() << "needs a float input";
  const Shape k = pool_window(c);
  c.n.shape = window_out(c, x, x[1], k[0], k[1]);
  c.n.dtype = c.in(0).dtype;
}

void pool2d_grad(Ctx& c) {  // inputs: x, dy
  const Shape& x = c.in(0).shape;
  need_rank4(c, x, "input");
  const Shape k = pool_window(c);
  if (window_out(c, x, x[1], k[0], k[1]) != c.in(1).shape)
    c.fail() << "gradient shape " << shape_str(c.in(1).shape) << " does not match the pooling";
  c.n.shape = x;
  c.n.dtype = c.in(0).dtype;
}

void avg_pool2d_grad(Ctx& c) {  // input: dy; attr input_shape
  const Shape& xs = c.n.attrs.ints("input_shape");
  need_rank4(c, xs, "input_shape");
  const Shape k = pool_window(c);
  if (window_out(c, xs, xs[1], k[0], k[1]) != c.in(0).shape)
    c.fail() << "gradient shape " << shape_str(c.in(0).shape) << " does not match the pooling";
  c.n.shape = xs;
  c.n.dtype = c.in(0).dtype;
}

void one_hot(Ctx& c) {
  if (c.in(0).dtype != DType::i32 && c.in(0).dtype != DType::i64)
    c.fail() << "indices must be i32 or i64, got " << dtype_name(c.in(0).dtype);
  const int64_t depth = c.n.attrs.i("depth");
  if (depth < 1) c.fail() << "depth must be >= 1, got " << depth;
  c.n.shape = c.in(0).shape;
  c.n.shape.push_back(depth);
  c.n.dtype = parse_dtype(c.n.attrs.s("dtype"));
}

void need_indices(Ctx& c, const Node& idx) {
  if (idx.dtype != DType::i32 && idx.dtype != DType::i64)
    c.fail() << "indices must be i32 or i64, got " << dtype_name(idx.dtype);
}

// params [V, D...], indices [I...] -> [I..., D...]
void gather(Ctx& c) {
  const Shape& p = c.in(0).shape;
  need_indices(c, c.in(1));
  if (p.empty()) c.fail() << "params must have rank >= 1 (rows to pick), got a scalar";
  c.n.shape = c.in(1).shape;
  c.n.shape.insert(c.n.shape.end(), p.begin() + 1, p.end());
  c.n.dtype = c.in(0).dtype;
}

// updates [I..., D...], indices [I...] -> [rows, D...]
void scatter_add(Ctx& c) {
  const Shape& u = c.in(0).shape;
  const Shape& i = c.in(1).shape;
  need_indices(c, c.in(1));
  const int64_t rows = c.n.attrs.i("rows");
  if (rows < 1) c.fail() << "rows must be >= 1, got " << rows;
  if (!is_float(c.in(0).dtype)) c.fail() << "updates must be float, got " << dtype_name(c.in(0).dtype);
  if (u.size() < i.size() || !std::equal(i.begin(), i.end(), u.begin()))
    c.fail() << "updates " << shape_str(u) << " must start with the indices' shape " << shape_str(i);
  c.n.shape = {rows};
  c.n.shape.insert(c.n.shape.end(), u.begin() + static_cast<std::ptrdiff_t>(i.size()), u.end());
  c.n.dtype = c.in(0).dtype;
}

void argmax(Ctx& c) {
  const Shape& in = c.in(0).shape;
  const int64_t axis = norm_axis(c, c.n.attrs.i("axis"), in.size());
  if (in.empty()) c.fail() << "argmax of a scalar";
  if (in[axis] == 0) c.fail() << "argmax over an empty axis";
  c.n.attrs.set("axis", axis);
  c.n.shape = in;
  c.n.shape.erase(c.n.shape.begin() + axis);
  c.n.dtype = DType::i64;
}

void random(Ctx& c) {
  for (size_t k = 0; k < 3; ++k) {
    const Node& in = c.in(k);
    if (in.dtype != DType::i64 || !in.shape.empty())
      c.fail() << "input " << k << " (" << (k == 0 ? "seed" : k == 1 ? "step" : "rank") << ") must be an i64 scalar, got "
               << dtype_name(in.dtype) << shape_str(in.shape);
  }
  const std::string& dist = c.n.attrs.s("distribution");
  if (dist != "uniform" && dist != "normal" && dist != "truncated_normal")
    c.fail() << "distribution '" << dist << "'; valid: uniform, normal, truncated_normal";
  c.n.dtype = parse_dtype(c.n.attrs.s("dtype"));
  if (c.n.dtype != DType::f32) c.fail() << "draws are f32 (cast them), not " << dtype_name(c.n.dtype);
  c.n.shape = c.n.attrs.ints("shape");
}

void assign(Ctx& c) {
  const Node& var = c.in(0);
  if (var.op != Op::variable) c.fail() << "first input must be a variable, got " << describe_node(c.g, c.n.inputs[0]);
  const Node& val = c.in(1);
  if (val.dtype != var.dtype || val.shape != var.shape)
    c.fail() << "value " << dtype_name(val.dtype) << shape_str(val.shape) << " does not match variable '" << var.name
             << "' " << dtype_name(var.dtype) << shape_str(var.shape);
  c.n.dtype = var.dtype;
  c.n.shape = var.shape;
}

// One input: the same tensor, summed over the ranks (float16 and bfloat16 summed in
// float32). Several (a bucket, passes::bucket_all_reduces): the inputs flattened one after
// another into one vector, summed over the ranks by one call; all of one type.
void collective(Ctx& c) {
  const DType t = c.in(0).dtype;
  if (t == DType::boolean) c.fail() << "reduces numbers across ranks, got " << dtype_name(t);
  if (c.n.attrs.i("world_size") < 1) c.fail() << "world_size must be >= 1, got " << c.n.attrs.i("world_size");
  c.n.dtype = t;
  if (c.n.inputs.size() == 1) {
    c.n.shape = c.in(0).shape;
    return;
  }
  int64_t total = 0;
  for (size_t i = 0; i < c.n.inputs.size(); ++i) {
    if (c.in(i).dtype != t)
      c.fail() << "a bucket holds one type: input " << i << " is " << dtype_name(c.in(i).dtype) << ", input 0 "
               << dtype_name(t);
    total += numel(c.in(i).shape);
  }
  c.n.shape = {total};
}

void cast(Ctx& c) {
  c.n.dtype = parse_dtype(c.n.attrs.s("dtype"));
  c.n.shape = c.in(0).shape;
}

// Every attribute the op table requires is present and no other is.
void check_attributes(const Ctx& c, std::string_view spec) {
  std::set<std::string, std::less<>> allowed;
  while (!spec.empty()) {
    const size_t sp = spec.find(' ');
    std::string_view word = spec.substr(0, sp);
    spec = sp == std::string_view::npos ? std::string_view() : spec.substr(sp + 1);
    const bool optional = !word.empty() && word.back() == '?';
    if (optional) word.remove_suffix(1);
    allowed.emplace(word);
    if (!optional && !c.n.attrs.has(std::string(word))) c.fail() << "missing attribute '" << word << "'";
  }
  for (const auto& [key, value] : c.n.attrs.items())
    if (!allowed.count(key)) {
      std::string valid;
      for (const auto& a : allowed) valid += (valid.empty() ? "" : ", ") + a;
      c.fail() << "unknown attribute '" << key << "'; valid: " << (valid.empty() ? "none" : valid);
    }
}

}  // namespace

namespace {
// x86-64 addresses 2^48 bytes: no tensor of a machine kiln runs on is larger.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 48;

// Every value's element count and byte size, computed without overflow: a shape whose
// size wraps around would get a buffer of the wrapped size (e.g. 16 bytes for 2^62+1 x 4
// elements) and every index into it would read or write outside it.
void check_size(const Ctx& c) {
  int64_t elements = 1, bytes = 0;
  for (int64_t d : c.n.shape) {
    if (d < 0) c.fail() << "shape " << shape_str(c.n.shape) << " has a negative extent";
    if (__builtin_mul_overflow(elements, d, &elements))
      c.fail() << "shape " << shape_str(c.n.shape) << " has more elements than a 64-bit count holds";
  }
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(dtype_size(c.n.dtype)), &bytes) || bytes > kMaxTensorBytes)
    c.fail() << dtype_name(c.n.dtype) << shape_str(c.n.shape) << " (" << elements
             << " elements) is larger than any machine's memory (2^48 bytes at most)";
}

void infer_family(Ctx& c, OpFamily family);
}  // namespace

void infer(const Graph& g, Node& n) {
  Ctx c{g, n};
  const OpInfo& info = op_info(n.op);
  check_attributes(c, info.attributes);
  if (info.arity >= 0 && n.inputs.size() != static_cast<size_t>(info.arity))
    c.fail() << "takes " << info.arity << " input(s), got " << n.inputs.size();
  for (ValueId in : n.inputs)
    if (in < 0 || static_cast<size_t>(in) >= g.size()) c.fail() << "input %" << in << " does not exist";
  infer_family(c, info.family);
  check_size(c);
}

namespace {
void infer_family(Ctx& c, OpFamily family) {
  switch (family) {
    case OpFamily::Source: return source(c);
    case OpFamily::Cast: return cast(c);
    case OpFamily::Unary: return unary(c);
    case OpFamily::Binary: return binary(c);
    case OpFamily::Compare: return compare(c);
    case OpFamily::Select: return select(c);
    case OpFamily::Reduce: return reduce(c);
    case OpFamily::Reshape: return reshape(c);
    case OpFamily::Transpose: return transpose(c);
    case OpFamily::BroadcastTo: return broadcast_to(c);
    case OpFamily::Slice: return slice(c);
    case OpFamily::Pad: return pad(c);
    case OpFamily::Concat: return concat(c);
    case OpFamily::MatMul: return matmul(c);
    case OpFamily::Dense: return dense(c);
    case OpFamily::Conv2D: return conv2d(c);
    case OpFamily::Conv2DBias: return conv2d_bias(c);
    case OpFamily::Conv2DBackwardInput: return conv2d_backward_input(c);
    case OpFamily::Conv2DBackwardFilter: return conv2d_backward_filter(c);
    case OpFamily::Pool2D: return pool2d(c);
    case OpFamily::Pool2DGrad: return pool2d_grad(c);
    case OpFamily::AvgPool2DGrad: return avg_pool2d_grad(c);
    case OpFamily::OneHot: return one_hot(c);
    case OpFamily::Gather: return gather(c);
    case OpFamily::ScatterAdd: return scatter_add(c);
    case OpFamily::ArgMax: return argmax(c);
    case OpFamily::Assign: return assign(c);
    case OpFamily::Collective: return collective(c);
    case OpFamily::Random: return random(c);
  }
}
}  // namespace

}  // namespace kiln
