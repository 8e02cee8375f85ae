// Finite-difference gradient checks, one named test per case, for every differentiable
// op in op_list.h. Each case builds y = op(x...) from float32 placeholders; the loss is
// reduce_sum(y * w) with fixed random weights w, so every output element matters with a
// different weight. grad() is compared against central differences of the loss computed
// by running the interpreter on perturbed inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/transformer.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::TestRng;


// How an input's values are drawn. Inputs are kept away from the points where an op is
// not differentiable (kinks at 0, ties between compared values, log/sqrt at 0).
struct In {
  enum Kind { uniform, away_from_zero, grid, distinct, labels, mask } kind = uniform;
  Shape shape;
  double a = -1, b = 1;  // uniform: [a, b]; away_from_zero: |x| in [a, b];
                         // grid: k*b + a for k in -4..4; distinct: spacing a; labels: classes a
  DType dtype() const { return kind == labels ? DType::i32 : kind == mask ? DType::boolean : DType::f32; }
};
In U(Shape s, double lo = -1, double hi = 1) { return {In::uniform, std::move(s), lo, hi}; }
In Pos(Shape s) { return {In::uniform, std::move(s), 0.5, 2.0}; }
In Away(Shape s) { return {In::away_from_zero, std::move(s), 0.1, 1.0}; }
In Grid(Shape s, double offset) { return {In::grid, std::move(s), offset, 0.2}; }
In Distinct(Shape s) { return {In::distinct, std::move(s), 0.05, 0}; }
In Labels(Shape s, int64_t classes) { return {In::labels, std::move(s), double(classes), 0}; }
In Mask(Shape s) { return {In::mask, std::move(s), 0, 0}; }

Array draw(const In& in, TestRng& rng) {
  Array v(in.dtype(), in.shape);
  const int64_t n = v.numel();
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  for (int64_t i = 0; i < n; ++i) {
    switch (in.kind) {
      case In::uniform: v.set(i, rng.uniform(in.a, in.b)); break;
      case In::away_from_zero: v.set(i, rng.uniform(in.a, in.b) * (rng.below(2) ? 1 : -1)); break;
      case In::grid: v.set(i, in.a + in.b * double(rng.below(9) - 4)); break;
      case In::distinct: v.set(i, in.a * double(perm[i] - n / 2) + 0.01); break;
      case In::labels: v.set(i, double(rng.below(int64_t(in.a)))); break;
      case In::mask: v.set(i, double(rng.below(2))); break;
    }
  }
  return v;
}

using Build = std::function<Tensor(const std::vector<Tensor>&)>;

struct GradCase {
  std::string name;
  std::vector<Op> covers;  // ops this case checks; each must appear in the forward graph
  std::vector<In> inputs;
  Build build;
  double eps = 1e-2;
  bool expect_zero = false;  // the gradient must be exactly zero (stop_gradient)
};
void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

GradCase unary_case(const std::string& name, Op op, In in, Tensor (*f)(const Tensor&)) {
  return {name, {op}, {std::move(in)}, [f](const std::vector<Tensor>& x) { return f(x[0]); }};
}

// Binary ops in four broadcasting arrangements.
void add_binary(std::vector<GradCase>& cases, const std::string& name, Op op, Tensor (*f)(const Tensor&, const Tensor&),
                std::function<In(Shape)> lhs, std::function<In(Shape)> rhs) {
  const Build b = [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); };
  cases.push_back({name + "_same", {op}, {lhs({2, 3}), rhs({2, 3})}, b});
  cases.push_back({name + "_row_broadcast", {op}, {lhs({3, 4}), rhs({4})}, b});
  cases.push_back({name + "_outer_broadcast", {op}, {lhs({3, 1}), rhs({1, 4})}, b});
  cases.push_back({name + "_scalar_rhs", {op}, {lhs({2, 3}), rhs({})}, b});
  cases.push_back({name + "_scalar_lhs", {op}, {lhs({}), rhs({3})}, b});
}

Build reduce_build(Tensor (*f)(const Tensor&, std::vector<int64_t>, bool), std::vector<int64_t> axes, bool keep) {
  return [=](const std::vector<Tensor>& x) { return f(x[0], axes, keep); };
}

std::vector<GradCase> all_cases() {
  std::vector<GradCase> c;
  // Unary.
  c.push_back(unary_case("neg", Op::neg, U({2, 3}), neg));
  c.push_back(unary_case("abs", Op::abs, Away({2, 3}), abs));
  c.push_back(unary_case("sign", Op::sign, Away({2, 3}), sign));
  c.push_back(unary_case("exp", Op::exp, U({2, 3}), exp));
  c.push_back(unary_case("log", Op::log, Pos({2, 3}), log));
  c.push_back(unary_case("sqrt", Op::sqrt, Pos({2, 3}), sqrt));
  c.push_back(unary_case("rsqrt", Op::rsqrt, Pos({2, 3}), rsqrt));
  c.push_back(unary_case("tanh", Op::tanh, U({2, 3}, -2, 2), tanh));
  c.push_back(unary_case("sigmoid", Op::sigmoid, U({2, 3}, -3, 3), sigmoid));
  c.push_back(unary_case("relu", Op::relu, Away({3, 4}), relu));
  c.push_back(unary_case("gelu", Op::gelu, U({3, 4}, -3, 3), gelu));
  c.push_back(unary_case("erf", Op::erf, U({3, 4}, -2, 2), erf));
  c.push_back(unary_case("cos", Op::cos, U({3, 4}, -4, 4), cos));
  c.push_back(unary_case("square_reuses_input", Op::mul, U({2, 3}), square));
  GradCase sg = unary_case("stop_gradient", Op::stop_gradient, U({2, 3}), stop_gradient);
  sg.expect_zero = true;
  c.push_back(sg);
  // f32 -> f16 -> f32: the identity up to f16 rounding, hence the large step.
  c.push_back({"cast_through_f16", {Op::cast}, {U({2, 3})},
               [](const std::vector<Tensor>& x) { return cast(cast(x[0], DType::f16), DType::f32); }, 0.05});
  GradCase to_int{"cast_through_i32_is_not_differentiable", {Op::cast}, {U({2, 3}, -3, 3)},
                  [](const std::vector<Tensor>& x) { return cast(cast(x[0], DType::i32), DType::f32); }};
  to_int.expect_zero = true;
  c.push_back(to_int);

  // Binary, with broadcasting. Compared operands live on interleaved grids, so a tie
  // (where maximum/minimum have a kink) is at least 0.1 away.
  auto u = [](Shape s) { return U(std::move(s)); };
  auto pos = [](Shape s) { return Pos(std::move(s)); };
  add_binary(c, "add", Op::add, add, u, u);
  add_binary(c, "sub", Op::sub, sub, u, u);
  add_binary(c, "mul", Op::mul, mul, u, u);
  add_binary(c, "div", Op::div, div, u, pos);
  add_binary(c, "maximum", Op::maximum, maximum, [](Shape s) { return Grid(s, 0.0); }, [](Shape s) { return Grid(s, 0.1); });
  add_binary(c, "minimum", Op::minimum, minimum, [](Shape s) { return Grid(s, 0.0); }, [](Shape s) { return Grid(s, 0.1); });
  add_binary(c, "gelu_grad", Op::gelu_grad, gelu_grad, [](Shape s) { return U(s, -3, 3); }, u);
  add_binary(c, "pow", Op::pow, pow, [](Shape s) { return U(s, 0.8, 2.0); }, [](Shape s) { return U(s, -1.5, 1.5); });
  const Build sel = [](const std::vector<Tensor>& x) { return select(x[0], x[1], x[2]); };
  c.push_back({"select_same", {Op::select}, {Mask({2, 3}), U({2, 3}), U({2, 3})}, sel});
  c.push_back({"select_broadcast", {Op::select}, {Mask({3, 1}), U({3, 4}), U({4})}, sel});

  // Reductions over [2,3,4]; max needs distinct values so that no window has a tie.
  struct R { const char* name; std::vector<int64_t> axes; bool keep; };
  const R reductions[] = {{"all", {}, false},         {"axis0", {0}, false},       {"axis1_keep", {1}, true},
                          {"neg_axis_keep", {-1}, true}, {"axes02", {0, 2}, false}, {"axes02_keep", {0, 2}, true}};
  for (const R& r : reductions) {
    c.push_back({std::string("reduce_sum_") + r.name, {Op::reduce_sum}, {U({2, 3, 4})}, reduce_build(reduce_sum, r.axes, r.keep)});
    c.push_back({std::string("reduce_mean_") + r.name, {Op::reduce_mean}, {U({2, 3, 4})}, reduce_build(reduce_mean, r.axes, r.keep)});
    c.push_back({std::string("reduce_max_") + r.name, {Op::reduce_max}, {Distinct({2, 3, 4})}, reduce_build(reduce_max, r.axes, r.keep)});
  }

  // Layout.
  c.push_back({"reshape", {Op::reshape}, {U({2, 3, 4})}, [](const std::vector<Tensor>& x) { return reshape(x[0], {4, -1}); }});
  c.push_back({"transpose_3d", {Op::transpose}, {U({2, 3, 4})}, [](const std::vector<Tensor>& x) { return transpose(x[0], {2, 0, 1}); }});
  c.push_back({"transpose_swap_leading", {Op::transpose}, {U({2, 3, 4})}, [](const std::vector<Tensor>& x) { return transpose(x[0], {1, 0, 2}); }});
  c.push_back({"broadcast_to_rank_up", {Op::broadcast_to}, {U({3, 1})}, [](const std::vector<Tensor>& x) { return broadcast_to(x[0], {2, 3, 4}); }});
  c.push_back({"broadcast_to_rows", {Op::broadcast_to}, {U({4})}, [](const std::vector<Tensor>& x) { return broadcast_to(x[0], {3, 4}); }});
  c.push_back({"slice_2d", {Op::slice}, {U({4, 5})}, [](const std::vector<Tensor>& x) { return slice(x[0], {1, 0}, {3, 4}); }});
  c.push_back({"slice_3d", {Op::slice}, {U({2, 3, 4})}, [](const std::vector<Tensor>& x) { return slice(x[0], {1, 1, 1}, {2, 3, 3}); }});
  c.push_back({"pad", {Op::pad}, {U({2, 3})}, [](const std::vector<Tensor>& x) { return pad(x[0], {1, 0}, {0, 2}); }});
  c.push_back({"concat_three_axis1", {Op::concat}, {U({2, 1, 3}), U({2, 2, 3}), U({2, 3, 3})},
               [](const std::vector<Tensor>& x) { return concat({x[0], x[1], x[2]}, 1); }});
  c.push_back({"concat_negative_axis", {Op::concat}, {U({2, 2}), U({2, 3})},
               [](const std::vector<Tensor>& x) { return concat({x[0], x[1]}, -1); }});

  // matmul: op(a) is [3,4], op(b) is [4,5] in every transpose combination.
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const Shape as = ta ? Shape{4, 3} : Shape{3, 4}, bs = tb ? Shape{5, 4} : Shape{4, 5};
      c.push_back({"matmul_ta" + std::to_string(ta) + "_tb" + std::to_string(tb), {Op::matmul}, {U(as), U(bs)},
                   [ta, tb](const std::vector<Tensor>& x) { return matmul(x[0], x[1], ta, tb); }});
    }
  c.push_back({"matmul_batched", {Op::matmul}, {U({2, 3, 4}), U({2, 4, 5})},
               [](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); }});
  c.push_back({"matmul_batched_transposed", {Op::matmul}, {U({2, 4, 3}), U({2, 5, 4})},
               [](const std::vector<Tensor>& x) { return matmul(x[0], x[1], true, true); }});

  // Convolution and pooling, NCHW.
  auto conv = [](std::vector<int64_t> st, std::vector<int64_t> pd) {
    return [=](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], st, pd); };
  };
  c.push_back({"conv2d_stride1", {Op::conv2d}, {U({2, 2, 5, 5}), U({3, 2, 3, 3})}, conv({1, 1}, {0, 0})});
  c.push_back({"conv2d_stride1_pad1", {Op::conv2d}, {U({1, 2, 5, 5}), U({3, 2, 3, 3})}, conv({1, 1}, {1, 1})});
  c.push_back({"conv2d_stride2_pad1", {Op::conv2d}, {U({2, 2, 5, 5}), U({2, 2, 3, 3})}, conv({2, 2}, {1, 1})});
  c.push_back({"conv2d_stride2_uncovered_edge", {Op::conv2d}, {U({1, 2, 6, 6}), U({2, 2, 3, 3})}, conv({2, 2}, {0, 0})});
  c.push_back({"conv2d_rect_kernel", {Op::conv2d}, {U({1, 1, 4, 5}), U({2, 1, 2, 3})}, conv({1, 2}, {1, 0})});
  // Grouped: depthwise (one group per channel), with a channel multiplier, two groups.
  auto grouped = [](std::vector<int64_t> st, std::vector<int64_t> pd, int64_t groups) {
    return [=](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], st, pd, groups); };
  };
  c.push_back({"conv2d_depthwise", {Op::conv2d}, {U({2, 3, 5, 5}), U({3, 1, 3, 3})}, grouped({1, 1}, {1, 1}, 3)});
  c.push_back({"conv2d_depthwise_x2_stride2", {Op::conv2d}, {U({1, 2, 5, 6}), U({4, 1, 3, 3})}, grouped({2, 2}, {1, 1}, 2)});
  c.push_back({"conv2d_two_groups", {Op::conv2d}, {U({1, 4, 4, 4}), U({6, 2, 2, 3})}, grouped({1, 1}, {0, 1}, 2)});
  using Pool = Tensor (*)(const Tensor&, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>);
  auto pool = [](Pool f, std::vector<int64_t> k, std::vector<int64_t> st, std::vector<int64_t> pd) {
    return [=](const std::vector<Tensor>& x) { return f(x[0], k, st, pd); };
  };
  c.push_back({"max_pool2d_2x2", {Op::max_pool2d}, {Distinct({1, 2, 4, 4})}, pool(max_pool2d, {2, 2}, {2, 2}, {0, 0})});
  c.push_back({"max_pool2d_overlapping", {Op::max_pool2d}, {Distinct({2, 1, 4, 4})}, pool(max_pool2d, {3, 3}, {1, 1}, {0, 0})});
  c.push_back({"max_pool2d_padded", {Op::max_pool2d}, {Distinct({1, 2, 5, 5})}, pool(max_pool2d, {3, 3}, {2, 2}, {1, 1})});
  c.push_back({"avg_pool2d_2x2", {Op::avg_pool2d}, {U({1, 2, 4, 4})}, pool(avg_pool2d, {2, 2}, {2, 2}, {0, 0})});
  c.push_back({"avg_pool2d_overlapping", {Op::avg_pool2d}, {U({2, 1, 4, 4})}, pool(avg_pool2d, {3, 3}, {1, 1}, {0, 0})});
  c.push_back({"avg_pool2d_padded", {Op::avg_pool2d}, {U({1, 2, 5, 5})}, pool(avg_pool2d, {3, 3}, {2, 2}, {1, 1})});

  // Composites, built from the primitives above.
  c.push_back({"softmax_last_axis", {Op::exp, Op::reduce_sum, Op::div}, {U({3, 4}, -2, 2)},
               [](const std::vector<Tensor>& x) { return softmax(x[0]); }});
  c.push_back({"softmax_axis0", {Op::exp, Op::reduce_sum, Op::div}, {U({3, 4}, -2, 2)},
               [](const std::vector<Tensor>& x) { return softmax(x[0], 0); }});
  c.push_back({"log_softmax", {Op::log, Op::exp, Op::stop_gradient}, {U({3, 5}, -2, 2)},
               [](const std::vector<Tensor>& x) { return log_softmax(x[0]); }});
  c.push_back({"gather", {Op::gather}, {U({5, 3}), Labels({2, 4}, 5)},
               [](const std::vector<Tensor>& x) { return gather(x[0], x[1]); }});
  c.push_back({"scatter_add", {Op::scatter_add}, {U({6, 2}), Labels({6}, 3)},
               [](const std::vector<Tensor>& x) { return scatter_add(x[0], x[1], 4); }});
  c.push_back({"sparse_softmax_cross_entropy", {Op::log, Op::reduce_sum}, {U({4, 5}, -2, 2), Labels({4}, 5)},
               [](const std::vector<Tensor>& x) { return sparse_softmax_cross_entropy(x[0], x[1]); }});
  // The transformer's composites (the gpt model): layer norm, causal masked softmax over
  // the last axis of a 4-D tensor, and one causal attention head.
  c.push_back({"layer_norm", {Op::reduce_mean, Op::rsqrt}, {U({3, 5}, -2, 2), U({5}, 0.5, 1.5), U({5})},
               [](const std::vector<Tensor>& x) { return layer_norm(x[0], x[1], x[2]); }});
  c.push_back({"layer_norm_3d", {Op::reduce_mean, Op::rsqrt}, {U({2, 3, 4}, -2, 2), U({4}, 0.5, 1.5), U({4})},
               [](const std::vector<Tensor>& x) { return layer_norm(x[0], x[1], x[2]); }});
  c.push_back({"masked_softmax_causal_4d", {Op::select, Op::exp, Op::greater_equal}, {U({2, 2, 3, 3}, -2, 2)},
               [](const std::vector<Tensor>& x) { return masked_softmax(x[0], causal_mask(x[0].graph(), 3)); }});
  c.push_back({"causal_attention", {Op::matmul, Op::select}, {U({2, 3, 4}), U({2, 3, 4}), U({2, 3, 4})},
               [](const std::vector<Tensor>& x) {
                 const Tensor p = masked_softmax(matmul(x[0], x[1], false, true) * 0.5, causal_mask(x[0].graph(), 3));
                 return matmul(p, x[2]);
               }});
  c.push_back({"dense_layer", {Op::matmul, Op::add, Op::relu}, {U({4, 3}), U({3, 5}), U({5}, 0.3, 0.6)},
               [](const std::vector<Tensor>& x) { return relu(matmul(x[0], x[1]) + x[2]); }, 5e-3});
  return c;
}

const std::vector<GradCase>& cases() {
  static const std::vector<GradCase> c = all_cases();
  return c;
}

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, MatchesCentralDifferences) {
  const GradCase& gc = GetParam();
  TestRng rng(testkit::seed_of(gc.name));
  Graph g;
  Feeds feeds;
  std::vector<Tensor> xs, wrt;
  std::vector<std::string> wrt_names;
  for (size_t k = 0; k < gc.inputs.size(); ++k) {
    const std::string name = "x" + std::to_string(k);
    xs.push_back(placeholder(g, name, gc.inputs[k].dtype(), gc.inputs[k].shape));
    feeds[name] = draw(gc.inputs[k], rng);
    if (gc.inputs[k].dtype() == DType::f32) {
      wrt.push_back(xs.back());
      wrt_names.push_back(name);
    }
  }
  const Tensor y = gc.build(xs);
  ASSERT_EQ(y.dtype(), DType::f32);
  for (Op op : gc.covers) EXPECT_FALSE(g.of_op(op).empty()) << "the graph has no " << op_name(op) << " node";
  const Tensor w = placeholder(g, "w", DType::f32, y.shape());
  feeds["w"] = testkit::uniform_array(rng, y.shape(), -1, 1);
  const Tensor loss = reduce_sum(y * w);
  g.add_output("loss", loss.id());
  Graph forward = g;  // without the gradient nodes

  const std::vector<Tensor> grads = grad(loss, wrt);
  ASSERT_EQ(grads.size(), wrt.size());
  for (size_t k = 0; k < grads.size(); ++k) {
    EXPECT_EQ(grads[k].dtype(), DType::f32);
    EXPECT_EQ(grads[k].shape(), wrt[k].shape());
    g.add_output("grad_" + wrt_names[k], grads[k].id());
  }
  Variables vars;
  const Fetches analytic = make_interpreter(g)->run(feeds, vars);
  auto fwd = make_interpreter(forward);
  auto loss_at = [&] { return static_cast<double>(fwd->run(feeds, vars).at("loss").item()); };

  for (const std::string& name : wrt_names) {
    const Array& ga = analytic.at("grad_" + name);
    Array& x = feeds[name];
    int failures = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double a = ga.get(i);
      if (gc.expect_zero) {
        EXPECT_EQ(a, 0.0) << name << "[" << i << "]";
        continue;
      }
      const double x0 = x.get(i);
      x.set(i, x0 + gc.eps);
      const double plus = loss_at();
      x.set(i, x0 - gc.eps);
      const double minus = loss_at();
      x.set(i, x0);
      const double numeric = (plus - minus) / (2 * gc.eps);
      const double tol = 1e-3 + 1e-2 * std::max(std::fabs(a), std::fabs(numeric));
      if (std::fabs(a - numeric) > tol && failures++ < 5)
        ADD_FAILURE() << "d loss / d " << name << "[" << i << "] at " << x0 << ": grad() gives " << a
                      << ", central differences give " << numeric;
    }
    EXPECT_EQ(failures, 0) << "elements of " << name << " with a wrong gradient";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GradCheck, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GradCase>& info) { return info.param.name; });

TEST(GradCheckCoverage, EveryDifferentiableOpHasACheck) {
  std::set<Op> covered;
  for (const GradCase& c : cases()) covered.insert(c.covers.begin(), c.covers.end());
  for (int i = 0; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    if (op_info(op).differentiable) {
      EXPECT_TRUE(covered.count(op)) << "no gradient check covers op " << op_name(op);
    }
  }
}

}  // namespace
}  // namespace kiln
