// The per-op cases that the compiled-vs-interpreter tests batch into a few graphs (a
// compile costs about a second, so one graph holds a whole family of ops).
//
// Each case builds y = op(x...) from placeholders. Float inputs are stored in the
// family graph's float type (f32, bf16 or f16); integer and bool inputs keep theirs.
// Every case outputs y; cases with a float y also add reduce_sum(y * w) (w random, of y's
// type) to one loss, and the gradients of that loss w.r.t. every float input are outputs
// too, so each op's VJP (and the backward-only ops it emits) is compared as well.
#pragma once
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/autodiff/grad.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/transformer.h"
#include "support/test_arrays.h"

namespace kiln::cpu_cases {

using testkit::TestRng;

// How an input's values are drawn.
struct In {
  enum Kind { uniform, away_from_zero, grid, distinct, labels, mask, ints, fixed } kind = uniform;
  Shape shape{};
  double a = -1, b = 1;   // uniform [a,b]; away |x| in [a,b]; grid k*b+a; distinct spacing a; labels/ints range [a,b)
  DType dtype = DType::f32;  // f32 = "the graph's float type"; other types are taken literally
  std::vector<double> values{};  // fixed
};
inline In U(Shape s, double lo = -1, double hi = 1) { return {In::uniform, std::move(s), lo, hi}; }
inline In Pos(Shape s) { return {In::uniform, std::move(s), 0.5, 2.0}; }
inline In Away(Shape s) { return {In::away_from_zero, std::move(s), 0.1, 1.0}; }
inline In Grid(Shape s, double offset) { return {In::grid, std::move(s), offset, 0.25}; }
inline In Distinct(Shape s) { return {In::distinct, std::move(s), 0.05, 0}; }
inline In Labels(Shape s, int64_t classes) { return {In::labels, std::move(s), 0, double(classes), DType::i32}; }
inline In Mask(Shape s) { return {In::mask, std::move(s), 0, 0, DType::boolean}; }
inline In Ints(DType t, Shape s, int64_t lo, int64_t hi) { return {In::ints, std::move(s), double(lo), double(hi), t}; }
inline In Fixed(DType t, Shape s, std::vector<double> v) { return {In::fixed, std::move(s), 0, 0, t, std::move(v)}; }

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

inline Array draw(const In& in, DType dtype, TestRng& rng) {
  Array v(dtype, in.shape);
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
      case In::labels:
      case In::ints: v.set(i, in.a + double(rng.below(int64_t(in.b - in.a)))); break;
      case In::mask: v.set(i, double(rng.below(2))); break;
      case In::fixed: v.set(i, in.values[static_cast<size_t>(i) % in.values.size()]); break;
    }
  }
  return v;
}

using Build = std::function<Tensor(const std::vector<Tensor>&)>;

struct Case {
  std::string name;
  std::vector<Op> covers;  // ops this case exercises (forward or backward)
  std::vector<In> inputs;
  Build build;
  double tol_scale = 1;  // widens the family tolerance for this case's outputs
};

// A family of cases as one graph, with its feeds.
struct FamilyGraph {
  Graph g;
  Feeds feeds;
  std::map<std::string, double> tol_scale;  // output name -> factor
};

// Builds the cases into one graph whose float inputs are stored as `float_type`.
inline FamilyGraph build_family(const std::vector<Case>& cases, DType float_type, uint64_t seed) {
  FamilyGraph f;
  Graph& g = f.g;
  TestRng rng(seed);
  std::vector<Tensor> wrt;
  std::vector<std::string> wrt_names;
  std::vector<double> wrt_scale;
  Tensor loss;
  for (const Case& c : cases) {
    std::vector<Tensor> xs;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      const In& in = c.inputs[k];
      const DType t = in.dtype == DType::f32 ? float_type : in.dtype;
      const std::string name = c.name + "/x" + std::to_string(k);
      xs.push_back(placeholder(g, name, t, in.shape));
      f.feeds[name] = draw(in, t, rng);
      if (is_float(t)) {
        wrt.push_back(xs.back());
        wrt_names.push_back(c.name + "/d_x" + std::to_string(k));
        wrt_scale.push_back(c.tol_scale);
      }
    }
    const Tensor y = c.build(xs);
    g.add_output(c.name + "/y", y.id());
    f.tol_scale[c.name + "/y"] = c.tol_scale;
    if (!is_float(y.dtype())) continue;
    const Tensor w = placeholder(g, c.name + "/w", y.dtype(), y.shape());
    f.feeds[c.name + "/w"] = draw(U(y.shape()), y.dtype(), rng);
    Tensor term = reduce_sum(y * w);
    if (term.dtype() != DType::f32) term = cast(term, DType::f32);
    loss = loss.valid() ? loss + term : term;
  }
  if (loss.valid()) {
    const std::vector<Tensor> grads = grad(loss, wrt);
    for (size_t k = 0; k < grads.size(); ++k) {
      g.add_output(wrt_names[k], grads[k].id());
      f.tol_scale[wrt_names[k]] = wrt_scale[k];
    }
  }
  return f;
}

inline Tensor other_low(const Tensor& x, DType low) { return cast(cast(x, low), x.dtype()); }

// Elementwise ops: unary, binary in every broadcasting arrangement, compares, select,
// casts, integer arithmetic and special values (NaN, infinities, saturation).
inline std::vector<Case> elementwise_cases() {
  std::vector<Case> c;
  auto unary = [&](const std::string& name, Op op, In in, Tensor (*f)(const Tensor&), double tol = 1) {
    c.push_back({name, {op}, {std::move(in)}, [f](const std::vector<Tensor>& x) { return f(x[0]); }, tol});
  };
  unary("neg", Op::neg, U({2, 3, 4}), neg);
  unary("abs", Op::abs, Away({2, 3, 4}), abs);
  unary("sign", Op::sign, Away({2, 3, 4}), sign);
  unary("exp", Op::exp, U({2, 3, 4}), exp);
  unary("log", Op::log, Pos({2, 3, 4}), log);
  unary("sqrt", Op::sqrt, Pos({2, 3, 4}), sqrt);
  unary("rsqrt", Op::rsqrt, Pos({2, 3, 4}), rsqrt);
  unary("tanh", Op::tanh, U({2, 3, 4}, -2, 2), tanh);
  unary("sigmoid", Op::sigmoid, U({2, 3, 4}, -3, 3), sigmoid);
  unary("relu", Op::relu, Away({2, 3, 4}), relu);
  unary("gelu", Op::gelu, U({2, 3, 4}, -3, 3), gelu);
  unary("erf", Op::erf, U({2, 3, 4}, -2, 2), erf);
  unary("cos", Op::cos, U({2, 3, 4}, -4, 4), cos);
  unary("square", Op::mul, U({2, 3, 4}), square);
  unary("stop_gradient", Op::stop_gradient, U({2, 3, 4}), stop_gradient);
  c.push_back({"cast_via_f16", {Op::cast}, {U({2, 3, 4})}, [](const auto& x) { return other_low(x[0], DType::f16) * x[0]; }});
  c.push_back({"cast_via_bf16", {Op::cast}, {U({2, 3, 4})}, [](const auto& x) { return other_low(x[0], DType::bf16) * x[0]; }});
  c.push_back({"cast_via_f32", {Op::cast}, {U({2, 3, 4})}, [](const auto& x) { return exp(other_low(x[0], DType::f32)); }});
  c.push_back({"long_chain", {Op::tanh, Op::exp}, {U({2, 3, 4}), U({4})},
               [](const auto& x) { return tanh(exp(x[0] * x[1]) - sigmoid(x[0])) * x[1] + gelu(x[0] - x[1]); }, 2});

  // Binary ops with the second (or first) operand broadcast along each kind of axis.
  struct Arr { const char* name; Shape a, b; };
  const Arr arrangements[] = {{"same", {2, 3, 4}, {2, 3, 4}},    {"scalar_rhs", {2, 3, 4}, {}},
                              {"scalar_lhs", {}, {2, 3, 4}},     {"row", {2, 3, 4}, {4}},
                              {"column", {2, 3, 4}, {2, 3, 1}},  {"middle", {2, 3, 4}, {2, 1, 4}},
                              {"leading", {1, 3, 4}, {2, 3, 4}}, {"outer", {3, 1}, {1, 4}}};
  using Bin = Tensor (*)(const Tensor&, const Tensor&);
  struct B { const char* name; Op op; Bin f; std::function<In(Shape)> lhs, rhs; };
  const B binaries[] = {
      {"add", Op::add, add, [](Shape s) { return U(s); }, [](Shape s) { return U(s); }},
      {"sub", Op::sub, sub, [](Shape s) { return U(s); }, [](Shape s) { return U(s); }},
      {"mul", Op::mul, mul, [](Shape s) { return U(s); }, [](Shape s) { return U(s); }},
      {"div", Op::div, div, [](Shape s) { return U(s); }, [](Shape s) { return Pos(s); }},
      {"maximum", Op::maximum, maximum, [](Shape s) { return Grid(s, 0); }, [](Shape s) { return Grid(s, 0.1); }},
      {"minimum", Op::minimum, minimum, [](Shape s) { return Grid(s, 0); }, [](Shape s) { return Grid(s, 0.1); }},
      {"pow", Op::pow, pow, [](Shape s) { return U(s, 0.8, 2.0); }, [](Shape s) { return U(s, -1.5, 1.5); }},
      {"gelu_grad", Op::gelu_grad, gelu_grad, [](Shape s) { return U(s, -4, 4); }, [](Shape s) { return U(s); }},
  };
  // add and mul in every arrangement; the others in three, rotating, so that every
  // arrangement is still seen by several ops (each case costs compile time).
  for (size_t k = 0; k < std::size(binaries); ++k) {
    const B& b = binaries[k];
    for (size_t j = 0; j < std::size(arrangements); ++j) {
      if (k >= 2 && (j + k) % 3 != 0) continue;
      const Arr& a = arrangements[j];
      c.push_back({std::string(b.name) + "_" + a.name, {b.op}, {b.lhs(a.a), b.rhs(a.b)},
                   [f = b.f](const auto& x) { return f(x[0], x[1]); }});
    }
  }

  // Compares on a grid so that ties happen; bool results are compared exactly.
  using Cmp = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<const char*, std::pair<Op, Cmp>> compares[] = {
      {"equal", {Op::equal, equal}}, {"not_equal", {Op::not_equal, not_equal}}, {"less", {Op::less, less}},
      {"less_equal", {Op::less_equal, less_equal}}, {"greater", {Op::greater, greater}},
      {"greater_equal", {Op::greater_equal, greater_equal}}};
  for (const auto& [name, of] : compares) {
    c.push_back({std::string(name) + "_float", {of.first}, {Grid({3, 4}, 0), Grid({4}, 0)},
                 [f = of.second](const auto& x) { return f(x[0], x[1]); }});
    c.push_back({std::string(name) + "_i32", {of.first}, {Ints(DType::i32, {3, 4}, -2, 3), Ints(DType::i32, {3, 1}, -2, 3)},
                 [f = of.second](const auto& x) { return f(x[0], x[1]); }});
  }
  c.push_back({"select_same", {Op::select}, {Mask({2, 3, 4}), U({2, 3, 4}), U({2, 3, 4})},
               [](const auto& x) { return select(x[0], x[1], x[2]); }});
  c.push_back({"select_broadcast", {Op::select}, {Mask({3, 1}), U({3, 4}), U({4})},
               [](const auto& x) { return select(x[0], x[1], x[2]); }});
  c.push_back({"select_from_compare", {Op::select, Op::greater}, {U({3, 4}), U({3, 4})},
               [](const auto& x) { return select(greater(x[0], x[1]), x[0] * x[1], x[1]); }});
  c.push_back({"select_i64", {Op::select}, {Mask({3, 4}), Ints(DType::i64, {3, 4}, -50, 50), Ints(DType::i64, {4}, -5, 5)},
               [](const auto& x) { return select(x[0], x[1], x[2]); }});

  // Integer arithmetic (forward only: not differentiable).
  c.push_back({"add_i64", {Op::add}, {Ints(DType::i64, {3, 4}, -1000000, 1000000), Ints(DType::i64, {4}, -9, 9)},
               [](const auto& x) { return x[0] + x[1]; }});
  c.push_back({"sub_mul_i32", {Op::sub, Op::mul}, {Ints(DType::i32, {3, 4}, -100, 100), Ints(DType::i32, {3, 4}, -100, 100)},
               [](const auto& x) { return (x[0] - x[1]) * x[1]; }});
  c.push_back({"div_i32", {Op::div}, {Ints(DType::i32, {3, 4}, -100, 100), Fixed(DType::i32, {4}, {3, -7, 1, 2})},
               [](const auto& x) { return x[0] / x[1]; }});
  c.push_back({"max_min_i64", {Op::maximum, Op::minimum}, {Ints(DType::i64, {3, 4}, -5, 5), Ints(DType::i64, {3, 4}, -5, 5)},
               [](const auto& x) { return maximum(x[0], x[1]) - minimum(x[0], x[1]); }});
  c.push_back({"unary_i32", {Op::neg, Op::abs, Op::sign, Op::relu}, {Ints(DType::i32, {3, 4}, -5, 5)},
               [](const auto& x) { return neg(x[0]) + abs(x[0]) * sign(x[0]) + relu(x[0]); }});

  // Special values: NaN propagates through maximum/minimum from either side; float->int
  // casts truncate, send NaN to 0 and saturate; any non-zero (NaN too) casts to true.
  const std::vector<double> specials = {kNaN, 1.5, -kInf, kInf, 0.0, -0.0, -2.5, 1e10, -1e10, 2.75, -0.75, 3e9};
  const std::vector<double> others = {0.5, kNaN, 2.0, -1.0, kNaN, 0.0, -3.0, 1.0, 4.0, 2.75, -0.5, 7.0};
  c.push_back({"maximum_nan", {Op::maximum}, {Fixed(DType::f32, {12}, specials), Fixed(DType::f32, {12}, others)},
               [](const auto& x) { return maximum(x[0], x[1]); }});
  c.push_back({"minimum_nan", {Op::minimum}, {Fixed(DType::f32, {12}, specials), Fixed(DType::f32, {12}, others)},
               [](const auto& x) { return minimum(x[0], x[1]); }});
  c.push_back({"cast_to_i32_saturates", {Op::cast}, {Fixed(DType::f32, {12}, specials)},
               [](const auto& x) { return cast(stop_gradient(x[0]), DType::i32); }});
  c.push_back({"cast_to_i64_saturates", {Op::cast}, {Fixed(DType::f32, {12}, specials)},
               [](const auto& x) { return cast(stop_gradient(x[0]), DType::i64); }});
  c.push_back({"cast_to_bool", {Op::cast}, {Fixed(DType::f32, {12}, specials)},
               [](const auto& x) { return cast(stop_gradient(x[0]), DType::boolean); }});
  // In-range values only: out of range, i64 -> i32 differs between the backends (see
  // the KNOWN BUG test in compiled_edge_test.cpp).
  c.push_back({"cast_ints", {Op::cast}, {Ints(DType::i64, {3, 4}, -2000000000LL, 2000000000LL), Ints(DType::i32, {3, 4}, -3, 3)},
               [](const auto& x) {
                 // i64 -> i32; i32 -> bool; bool -> i64; i32 -> f32 -> i64.
                 return cast(cast(x[0], DType::i32), DType::i64) + cast(cast(x[1], DType::boolean), DType::i64) +
                        cast(cast(x[1], DType::f32), DType::i64);
               }});
  c.push_back({"cast_int_to_float", {Op::cast}, {Ints(DType::i32, {3, 4}, -300, 300), Mask({3, 4}), U({3, 4})},
               [](const auto& x) {
                 return cast(x[0], x[2].dtype()) * x[2] + cast(x[1], x[2].dtype());
               }});
  c.push_back({"constant_operands", {Op::constant}, {U({2, 3})},
               [](const auto& x) { return (x[0] * 3.0 + 0.5) / 2.0 - constant(x[0].graph(), 1.25, x[0].dtype(), {2, 3}); }});
  return c;
}

// Reductions over every kind of axis set, layout ops and the composites built on them.
inline std::vector<Case> reduce_layout_cases() {
  std::vector<Case> c;
  using Red = Tensor (*)(const Tensor&, std::vector<int64_t>, bool);
  struct R { const char* name; std::vector<int64_t> axes; bool keep; };
  const R arrangements[] = {{"all", {}, false},          {"all_keep", {}, true},         {"leading", {0}, false},
                            {"trailing_keep", {-1}, true}, {"middle", {1}, false},        {"middle_keep", {1}, true},
                            {"outer_two", {0, 2}, false},  {"leading_two_keep", {0, 1}, true}, {"trailing_two", {1, 2}, false}};
  const std::tuple<const char*, Op, Red> reds[] = {{"reduce_sum", Op::reduce_sum, reduce_sum},
                                                   {"reduce_mean", Op::reduce_mean, reduce_mean},
                                                   {"reduce_max", Op::reduce_max, reduce_max}};
  for (const auto& [name, op, f] : reds)
    for (const R& r : arrangements) {
      In in = op == Op::reduce_max ? Distinct({2, 3, 4}) : U({2, 3, 4});
      c.push_back({std::string(name) + "_" + r.name, {op}, {in},
                   [f = f, r](const auto& x) { return f(x[0], r.axes, r.keep); }, 2});
    }
  // Larger extents: the compiled reduction walks column blocks of 64 for leading axes.
  c.push_back({"reduce_sum_leading_wide", {Op::reduce_sum}, {U({64, 130})}, [](const auto& x) { return reduce_sum(x[0], {0}); }, 4});
  c.push_back({"reduce_mean_trailing_long", {Op::reduce_mean}, {U({5, 700})}, [](const auto& x) { return reduce_mean(x[0], {1}, true); }, 4});
  c.push_back({"reduce_max_middle_long", {Op::reduce_max}, {U({3, 257, 5})}, [](const auto& x) { return reduce_max(x[0], {1}); }, 4});
  // Reduced axes on both sides of kept ones (a convolution's bias gradient): nested loops
  // over merged runs of axes, the innermost a SIMD sum; size-1 axes in between.
  c.push_back({"reduce_sum_around_channels", {Op::reduce_sum}, {U({4, 3, 5, 40})},
               [](const auto& x) { return reduce_sum(x[0], {0, 2, 3}); }, 4});
  c.push_back({"reduce_mean_around_unit_axes", {Op::reduce_mean}, {U({2, 1, 3, 1, 37})},
               [](const auto& x) { return reduce_mean(x[0], {0, 3, 4}, true); }, 4});
  c.push_back({"reduce_max_around_channels", {Op::reduce_max}, {Distinct({3, 4, 2, 19})},
               [](const auto& x) { return reduce_max(x[0], {0, 2, 3}); }});
  c.push_back({"reduce_sum_around_fused_expr", {Op::reduce_sum, Op::relu}, {U({3, 4, 6, 7}), U({3, 4, 6, 7})},
               [](const auto& x) { return reduce_sum(x[0] * relu(x[1]), {0, 2, 3}, true); }, 4});
  c.push_back({"reduce_of_fused_expr", {Op::reduce_sum, Op::exp}, {U({4, 6}), U({6})},
               [](const auto& x) { return reduce_sum(exp(x[0] * x[1]) + x[1], {0}, true); }, 4});
  c.push_back({"reduce_sum_i32", {Op::reduce_sum}, {Ints(DType::i32, {3, 5}, -100, 100)},
               [](const auto& x) { return reduce_sum(x[0], {1}); }});
  c.push_back({"reduce_max_i64", {Op::reduce_max}, {Ints(DType::i64, {3, 5}, -100, 100)},
               [](const auto& x) { return reduce_max(x[0], {0}, true); }});
  c.push_back({"reduce_max_nan", {Op::reduce_max}, {Fixed(DType::f32, {3, 4}, {1, kNaN, 3, 2, -kInf, -1, -2, -3, 5, 6, kNaN, kNaN})},
               [](const auto& x) { return reduce_max(stop_gradient(x[0]), {1}); }});

  c.push_back({"reshape", {Op::reshape}, {U({2, 3, 4})}, [](const auto& x) { return reshape(x[0], {4, -1}) * 2.0; }});
  c.push_back({"reshape_then_broadcast", {Op::reshape}, {U({3}), U({2, 3, 4})},
               [](const auto& x) { return reshape(x[0], {3, 1}) * x[1]; }});
  c.push_back({"transpose_3d", {Op::transpose}, {U({2, 3, 4})}, [](const auto& x) { return transpose(x[0], {2, 0, 1}); }});
  c.push_back({"transpose_2d", {Op::transpose}, {U({5, 3})}, [](const auto& x) { return transpose(x[0], {1, 0}) + 1.0; }});
  c.push_back({"broadcast_to_rank_up", {Op::broadcast_to}, {U({3, 1})}, [](const auto& x) { return broadcast_to(x[0], {2, 3, 4}); }});
  c.push_back({"broadcast_to_rows", {Op::broadcast_to}, {U({4})}, [](const auto& x) { return broadcast_to(x[0], {3, 4}); }});
  c.push_back({"slice_2d", {Op::slice}, {U({4, 5})}, [](const auto& x) { return slice(x[0], {1, 0}, {3, 4}); }});
  c.push_back({"slice_3d", {Op::slice}, {U({2, 3, 4})}, [](const auto& x) { return slice(x[0], {1, 1, 1}, {2, 3, 3}); }});
  c.push_back({"pad", {Op::pad}, {U({2, 3})}, [](const auto& x) { return pad(x[0], {1, 0}, {0, 2}); }});
  c.push_back({"concat_three_axis1", {Op::concat}, {U({2, 1, 3}), U({2, 2, 3}), U({2, 3, 3})},
               [](const auto& x) { return concat({x[0], x[1], x[2]}, 1); }});
  c.push_back({"concat_negative_axis", {Op::concat}, {U({2, 2}), U({2, 3})}, [](const auto& x) { return concat({x[0], x[1]}, -1); }});

  c.push_back({"softmax", {Op::exp, Op::reduce_max}, {U({3, 5}, -2, 2)}, [](const auto& x) { return softmax(x[0]); }, 2});
  // The gpt model's composites: layer norm and the causal masked softmax of attention.
  c.push_back({"layer_norm", {Op::reduce_mean, Op::rsqrt}, {U({3, 8}, -2, 2), U({8}, 0.5, 1.5), U({8})},
               [](const auto& x) { return layer_norm(x[0], x[1], x[2]); }, 4});
  c.push_back({"masked_softmax_causal_4d", {Op::select, Op::greater_equal, Op::concat}, {U({2, 2, 5, 5}, -2, 2)},
               [](const auto& x) { return masked_softmax(x[0], causal_mask(x[0].graph(), 5)); }, 2});
  c.push_back({"log_softmax_axis0", {Op::log}, {U({3, 5}, -2, 2)}, [](const auto& x) { return log_softmax(x[0], 0); }, 2});
  c.push_back({"cross_entropy", {Op::one_hot}, {U({4, 5}, -2, 2), Labels({4}, 5)},
               [](const auto& x) { return sparse_softmax_cross_entropy(x[0], x[1]); }, 2});
  c.push_back({"one_hot_out_of_range", {Op::one_hot}, {Fixed(DType::i32, {6}, {0, 2, -1, 3, 1, 7})},
               [](const auto& x) { return one_hot(x[0], 3, DType::f32); }});
  c.push_back({"one_hot_i64_to_i32", {Op::one_hot}, {Ints(DType::i64, {2, 3}, 0, 4)},
               [](const auto& x) { return one_hot(x[0], 4, DType::i32); }});
  // Dropout's pattern: a mask of uniform draws, and normal noise, scaling an input; the
  // draws are bit-equal, so the products are too.
  c.push_back({"random_dropout_and_noise", {Op::random}, {U({3, 4, 5})}, [](const auto& x) {
                 Graph& g = x[0].graph();
                 const Tensor seed = hyperparameter(g, 11, DType::i64), step = hyperparameter(g, 3, DType::i64);
                 const Tensor rank = hyperparameter(g, 0, DType::i64);
                 const Tensor u = random(seed, step, rank, {3, 4, 5}, "uniform", 1);
                 const Tensor keep = select(greater_equal(u, scalar_like(u, 0.25)), scalar_like(u, 1 / 0.75), scalar_like(u, 0));
                 const Tensor noise = random(seed, step, rank, {3, 4, 5}, "normal", 2) * scalar_like(u, 0.1);
                 return x[0] * cast(keep, x[0].dtype()) + cast(noise, x[0].dtype());
               }});
  // Repeated indices make the gradient's scatter sum rows; out-of-range ones read zeros.
  c.push_back({"gather_embedding", {Op::gather, Op::scatter_add}, {U({5, 3}), Fixed(DType::i32, {2, 4}, {0, 4, 2, 2, 1, 0, 3, 4})},
               [](const auto& x) { return gather(x[0], x[1]); }});
  c.push_back({"gather_out_of_range_i64", {Op::gather}, {U({5, 2, 2}), Fixed(DType::i64, {4}, {0, -1, 5, 2})},
               [](const auto& x) { return gather(x[0], x[1]); }});
  c.push_back({"scatter_add", {Op::scatter_add, Op::gather}, {U({3, 2}), Fixed(DType::i32, {3}, {1, 1, 4})},
               [](const auto& x) { return scatter_add(x[0], x[1], 5); }});
  c.push_back({"argmax_float", {Op::argmax}, {Grid({3, 4, 5}, 0)}, [](const auto& x) { return argmax(x[0], 1); }});
  // In a world of one rank the collective is a copy (tests/dist/mpi_train.py runs 2 ranks).
  c.push_back({"all_reduce_one_rank", {Op::all_reduce}, {U({3, 4})}, [](const auto& x) { return all_reduce(x[0], 1); }});
  c.push_back({"all_reduce_bucket_one_rank", {Op::all_reduce}, {U({3, 4}), U({5}), U({})},
               [](const auto& x) { return all_reduce({x[0], x[1], x[2]}, 1); }});
  c.push_back({"argmax_nan", {Op::argmax}, {Fixed(DType::f32, {3, 4}, {1, kNaN, 3, 2, 5, 5, -1, 0, -kInf, -kInf, -kInf, -kInf})},
               [](const auto& x) { return argmax(x[0], -1); }});
  c.push_back({"argmax_i32", {Op::argmax}, {Ints(DType::i32, {4, 3}, -2, 2)}, [](const auto& x) { return argmax(x[0], 0); }});
  return c;
}

// matmul in every arrangement, convolution and pooling (their backward ops too).
inline std::vector<Case> nn_cases() {
  std::vector<Case> c;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const Shape as = ta ? Shape{4, 3} : Shape{3, 4}, bs = tb ? Shape{5, 4} : Shape{4, 5};
      c.push_back({"matmul_ta" + std::to_string(ta) + "_tb" + std::to_string(tb), {Op::matmul}, {U(as), U(bs)},
                   [ta, tb](const auto& x) { return matmul(x[0], x[1], ta, tb); }, 2});
    }
  c.push_back({"matmul_batched", {Op::matmul}, {U({2, 3, 4}), U({2, 4, 5})}, [](const auto& x) { return matmul(x[0], x[1]); }, 2});
  c.push_back({"matmul_batched_transposed", {Op::matmul}, {U({2, 4, 3}), U({2, 5, 4})},
               [](const auto& x) { return matmul(x[0], x[1], true, true); }, 2});
  c.push_back({"matmul_large", {Op::matmul}, {U({33, 70}), U({70, 17})}, [](const auto& x) { return matmul(x[0], x[1]); }, 4});
  c.push_back({"matmul_vector", {Op::matmul}, {U({1, 64}), U({64, 1})}, [](const auto& x) { return matmul(x[0], x[1]); }, 4});
  c.push_back({"dense_relu", {Op::matmul, Op::add, Op::relu}, {U({8, 6}), U({6, 5}), U({5}, 0.1, 0.4)},
               [](const auto& x) { return relu(matmul(x[0], x[1]) + x[2]); }, 4});
  // Matmul epilogues (oneDNN post-ops): a bias row without ReLU, and bias+ReLU whose
  // product feeds a second layer.
  c.push_back({"dense_bias_row", {Op::matmul, Op::add}, {U({8, 6}), U({6, 5}), U({1, 5})},
               [](const auto& x) { return matmul(x[0], x[1]) + x[2]; }, 4});
  c.push_back({"two_dense_layers", {Op::matmul, Op::add, Op::relu}, {U({8, 6}), U({6, 5}), U({5}), U({5, 3}), U({3})},
               [](const auto& x) { return matmul(relu(matmul(x[0], x[1]) + x[2]), x[3]) + x[4]; }, 4});
  // Addends (a binary post-op): a residual after the bias, one under ReLU, a product's
  // sum with another product, and a bias-less product plus an input.
  c.push_back({"dense_residual", {Op::matmul, Op::add}, {U({8, 6}), U({6, 5}), U({5}), U({8, 5})},
               [](const auto& x) { return x[3] + (matmul(x[0], x[1]) + x[2]); }, 4});
  c.push_back({"dense_residual_relu", {Op::matmul, Op::add, Op::relu}, {U({8, 6}), U({6, 5}), U({1, 5}), U({8, 5})},
               [](const auto& x) { return relu(matmul(x[0], x[1]) + x[2] + x[3]); }, 4});
  c.push_back({"matmul_plus_matmul", {Op::matmul, Op::add}, {U({4, 6}), U({6, 3}), U({4, 2}), U({2, 3})},
               [](const auto& x) { return matmul(x[0], x[1]) + matmul(x[2], x[3]); }, 4});
  c.push_back({"matmul_plus_input", {Op::matmul, Op::add}, {U({3, 7}), U({3, 5}), U({7, 5})},
               [](const auto& x) { return matmul(x[0], x[1], true) + x[2]; }, 4});
  c.push_back({"matmul_chain", {Op::matmul}, {U({4, 6}), U({6, 6}), U({6, 3})},
               [](const auto& x) { return matmul(tanh(matmul(x[0], x[1])), x[2]); }, 4});

  auto conv = [](std::vector<int64_t> st, std::vector<int64_t> pd) {
    return [=](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], st, pd); };
  };
  const std::vector<Op> conv_ops = {Op::conv2d, Op::conv2d_backward_input, Op::conv2d_backward_filter};
  c.push_back({"conv2d_stride1", conv_ops, {U({2, 2, 5, 5}), U({3, 2, 3, 3})}, conv({1, 1}, {0, 0}), 4});
  c.push_back({"conv2d_pad1", conv_ops, {U({1, 2, 5, 5}), U({3, 2, 3, 3})}, conv({1, 1}, {1, 1}), 4});
  c.push_back({"conv2d_stride2_pad1", conv_ops, {U({2, 2, 5, 5}), U({2, 2, 3, 3})}, conv({2, 2}, {1, 1}), 4});
  c.push_back({"conv2d_rect", conv_ops, {U({1, 1, 4, 5}), U({2, 1, 2, 3})}, conv({1, 2}, {1, 0}), 4});
  // Grouped convolutions (oneDNN's goihw filters): depthwise, with a channel multiplier
  // and stride 2, two groups; 32 channels take the blocked layouts; a bias epilogue.
  auto grouped = [](std::vector<int64_t> st, std::vector<int64_t> pd, int64_t groups) {
    return [=](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], st, pd, groups); };
  };
  c.push_back({"conv2d_depthwise", conv_ops, {U({2, 3, 5, 5}), U({3, 1, 3, 3})}, grouped({1, 1}, {1, 1}, 3), 4});
  c.push_back({"conv2d_depthwise_x2_s2", conv_ops, {U({1, 2, 5, 6}), U({4, 1, 3, 3})}, grouped({2, 2}, {1, 1}, 2), 4});
  // A 3x3 window over 2x2 maps: no oneDNN depthwise kernel, kiln's loops (depthwise_loops.h).
  c.push_back({"conv2d_depthwise_small_maps", conv_ops, {U({4, 48, 2, 2}), U({48, 1, 3, 3})}, grouped({1, 1}, {1, 1}, 48), 4});
  c.push_back({"conv2d_two_groups", conv_ops, {U({1, 4, 4, 4}), U({6, 2, 2, 3})}, grouped({1, 1}, {0, 1}, 2), 4});
  c.push_back({"conv2d_depthwise_blocked_bias", {Op::conv2d, Op::add, Op::relu},
               {U({2, 32, 7, 9}), U({32, 1, 3, 3}), U({32, 1, 1}), U({32, 32, 1, 1})},
               [](const auto& x) {
                 const Tensor h = relu(conv2d(x[0], x[1], {1, 1}, {1, 1}, 32) + x[2]);
                 return conv2d(conv2d(h, x[1], {2, 2}, {1, 1}, 32), x[3]);
               }, 4});
  using Pool = Tensor (*)(const Tensor&, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>);
  auto pool = [](Pool f, std::vector<int64_t> k, std::vector<int64_t> st, std::vector<int64_t> pd) {
    return [=](const std::vector<Tensor>& x) { return f(x[0], k, st, pd); };
  };
  const std::vector<Op> max_ops = {Op::max_pool2d, Op::max_pool2d_grad};
  const std::vector<Op> avg_ops = {Op::avg_pool2d, Op::avg_pool2d_grad};
  c.push_back({"max_pool_2x2", max_ops, {Distinct({1, 2, 4, 4})}, pool(max_pool2d, {2, 2}, {2, 2}, {0, 0})});
  c.push_back({"max_pool_overlap", max_ops, {Distinct({2, 1, 5, 5})}, pool(max_pool2d, {3, 3}, {1, 1}, {0, 0})});
  c.push_back({"max_pool_3x3_stride_2", max_ops, {Distinct({2, 3, 11, 9})}, pool(max_pool2d, {3, 3}, {2, 2}, {0, 0})});
  // Overlapping windows full of ties (three values): the first tap holding the maximum
  // gets dy, also where two windows share it.
  std::vector<double> three;
  for (int64_t i = 0; i < 9 * 9; ++i) three.push_back(static_cast<double>((i * 7 + i / 9) % 3));
  c.push_back({"max_pool_3x3_stride_2_ties", max_ops, {Fixed(DType::f32, {1, 1, 9, 9}, three)},
               pool(max_pool2d, {3, 3}, {2, 2}, {0, 0})});
  c.push_back({"max_pool_padded", max_ops, {Distinct({1, 2, 5, 5})}, pool(max_pool2d, {3, 3}, {2, 2}, {1, 1})});
  // The vectorised 2x2 rows: 20 outputs a row (a full vector and a tail), odd sizes (the
  // last row and column in no window), and ReLU zeros (ties: the first tap gets it).
  c.push_back({"max_pool_2x2_wide_odd", max_ops, {Distinct({1, 2, 5, 41})}, pool(max_pool2d, {2, 2}, {2, 2}, {0, 0})});
  // Every window of four taps drawn from {1, 2, 2, -0.5} and two values apart: equal
  // maxima in every arrangement, which only the first tap may receive.
  std::vector<double> ties;
  for (int64_t i = 0; i < 4 * 40; ++i) {
    const int64_t r = i / 40, col = i % 40, window = col / 2 + 20 * (r / 2), tap = (r % 2) * 2 + col % 2;
    ties.push_back(std::vector<double>{1, 2, 2, -0.5}[(window / (tap == 0 ? 1 : tap == 1 ? 4 : tap == 2 ? 16 : 64) + tap) % 4]);
  }
  c.push_back({"max_pool_2x2_ties", max_ops, {Fixed(DType::f32, {1, 1, 4, 40}, ties)},
               pool(max_pool2d, {2, 2}, {2, 2}, {0, 0})});
  // With 16 channels oneDNN runs the convolutions on channel-blocked activations, and the
  // schedule keeps the pools between them blocked (layout_plan.h): x, y, dy and dx of
  // both pools in nChw16c (nChw8c on AVX2). A 1x1 identity filter passes the ties through
  // both convolutions exactly, so only the first tap may get each window's gradient; the
  // odd width leaves a last column in no window.
  std::vector<double> identity(16 * 16, 0.0);
  for (int64_t i = 0; i < 16; ++i) identity[static_cast<size_t>(i * 17)] = 1;
  c.push_back({"conv_pool_conv_blocked_ties", {Op::conv2d, Op::max_pool2d, Op::max_pool2d_grad},
               {Fixed(DType::f32, {1, 16, 4, 41}, ties), Fixed(DType::f32, {16, 16, 1, 1}, identity)},
               [](const auto& x) { return conv2d(max_pool2d(conv2d(x[0], x[1]), {2, 2}, {2, 2}, {0, 0}), x[1]); }, 4});
  // Convolutions back to back: the ReLU's gradient (an elementwise select) and a residual
  // add run on the blocked activations too.
  c.push_back({"conv_relu_conv_residual_blocked", {Op::conv2d, Op::relu, Op::add},
               {U({2, 16, 5, 7}), U({16, 16, 3, 3}), U({16, 1, 1}), U({16, 16, 3, 3})},
               [](const auto& x) {
                 const Tensor h = relu(conv2d(x[0], x[1], {1, 1}, {1, 1}) + x[2]);
                 return conv2d(h + relu(conv2d(h, x[3], {1, 1}, {1, 1})), x[3], {1, 1}, {1, 1});
               }, 4});
  // A blocked pool whose output a plain step reads (the flatten before a dense layer):
  // y and dy plain, x and dx blocked; ReLU's mask folded into the pool's gradient, and
  // the bias gradient computed by the filter-gradient convolution (bias_gradient.h).
  c.push_back({"conv_relu_pool_flatten_blocked", {Op::conv2d, Op::relu, Op::max_pool2d, Op::max_pool2d_grad},
               {U({2, 3, 7, 9}), U({16, 3, 3, 3}), U({16, 1, 1})},
               [](const auto& x) {
                 const Tensor p = max_pool2d(relu(conv2d(x[0], x[1], {1, 1}, {1, 1}) + x[2]), {2, 2}, {2, 2});
                 return reshape(p, {2, 16 * 3 * 4});
               }, 4});
  // ReLU then max pooling: the ReLU-mask pass folds the ReLU's gradient into the pool's
  // (positive=1), on each gradient path: 2x2 rows, overlapping windows, stride gaps.
  auto relu_pool = [](std::vector<int64_t> k, std::vector<int64_t> st) {
    return [=](const std::vector<Tensor>& x) { return max_pool2d(relu(x[0]), k, st, {0, 0}); };
  };
  const std::vector<Op> relu_pool_ops = {Op::relu, Op::max_pool2d, Op::max_pool2d_grad};
  c.push_back({"relu_max_pool_2x2", relu_pool_ops, {U({1, 2, 6, 40})}, relu_pool({2, 2}, {2, 2})});
  c.push_back({"relu_max_pool_overlap", relu_pool_ops, {U({1, 2, 6, 7})}, relu_pool({3, 3}, {1, 1})});
  c.push_back({"relu_max_pool_gaps", relu_pool_ops, {U({1, 2, 7, 7})}, relu_pool({2, 2}, {3, 3})});
  // Windows written whole, with untouched elements between them (stride > window).
  c.push_back({"max_pool_stride_gaps", max_ops, {Distinct({1, 2, 7, 7})}, pool(max_pool2d, {2, 2}, {3, 3}, {0, 0})});
  c.push_back({"avg_pool_stride_gaps", avg_ops, {U({1, 2, 7, 7})}, pool(avg_pool2d, {2, 2}, {3, 3}, {0, 0})});
  c.push_back({"avg_pool_2x2", avg_ops, {U({1, 2, 4, 4})}, pool(avg_pool2d, {2, 2}, {2, 2}, {0, 0})});
  c.push_back({"avg_pool_padded", avg_ops, {U({1, 2, 5, 5})}, pool(avg_pool2d, {3, 3}, {2, 2}, {1, 1})});
  c.push_back({"conv_relu_pool", {Op::conv2d, Op::relu, Op::max_pool2d}, {U({2, 1, 6, 6}), U({2, 1, 3, 3}), U({2, 1, 1})},
               [](const auto& x) {
                 return max_pool2d(relu(conv2d(x[0], x[1], {1, 1}, {1, 1}) + x[2]), {2, 2}, {2, 2});
               }, 4});
  return c;
}

}  // namespace kiln::cpu_cases
