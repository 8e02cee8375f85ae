// Shape and dtype inference, and the GraphErrors that builder misuse raises. Each error
// message must name the op that failed.
#include <gtest/gtest.h>

#include "kiln/base/error.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

// Runs f, expects a GraphError, and returns its message.
template <class F>
std::string graph_error(F f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(wrong exception type) ") + e.what();
  }
  return "(no exception)";
}

#define EXPECT_GRAPH_ERROR(expr, ...)                                           \
  do {                                                                          \
    const std::string msg_ = graph_error([&] { (void)(expr); });                \
    for (const char* part : {__VA_ARGS__})                                      \
      EXPECT_NE(msg_.find(part), std::string::npos) << "'" << part << "' not in: " << msg_; \
  } while (0)

class Infer : public ::testing::Test {
 protected:
  Graph g;
  Tensor x23 = placeholder(g, "x23", DType::f32, {2, 3});
  Tensor x34 = placeholder(g, "x34", DType::f32, {3, 4});
  Tensor x4 = placeholder(g, "x4", DType::f32, {4});
  Tensor img = placeholder(g, "img", DType::f32, {2, 3, 8, 8});
};

TEST_F(Infer, ElementwiseAndBroadcast) {
  EXPECT_EQ((x34 + x4).shape(), (Shape{3, 4}));
  EXPECT_EQ((reshape(x4, {4, 1}) * x4).shape(), (Shape{4, 4}));
  EXPECT_EQ((x23 + scalar_like(x23, 1)).shape(), (Shape{2, 3}));
  EXPECT_EQ(less(x23, scalar_like(x23, 0)).dtype(), DType::boolean);
  EXPECT_EQ(cast(x23, DType::bf16).dtype(), DType::bf16);
  EXPECT_EQ(select(less(x4, x4), x34, x4).shape(), (Shape{3, 4}));
}

TEST_F(Infer, ReductionsNormaliseAxes) {
  Tensor r = reduce_sum(img, {-1, 1});
  EXPECT_EQ(r.shape(), (Shape{2, 8}));
  EXPECT_EQ(r.node().attrs.ints("axes"), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(reduce_max(img, {0, 2}, true).shape(), (Shape{1, 3, 1, 8}));
  EXPECT_EQ(reduce_mean(img).shape(), (Shape{}));
}

TEST_F(Infer, LayoutOps) {
  EXPECT_EQ(reshape(img, {2, -1}).shape(), (Shape{2, 192}));
  EXPECT_EQ(reshape(img, {2, -1}).node().attrs.ints("shape"), (std::vector<int64_t>{2, 192}));
  EXPECT_EQ(transpose(img, {0, 2, 3, 1}).shape(), (Shape{2, 8, 8, 3}));
  EXPECT_EQ(slice(x34, {1, 0}, {3, 2}).shape(), (Shape{2, 2}));
  EXPECT_EQ(pad(x23, {1, 2}, {3, 0}).shape(), (Shape{6, 5}));
  EXPECT_EQ(concat({x23, x23, x23}, -1).shape(), (Shape{2, 9}));
  EXPECT_EQ(broadcast_to(x4, {2, 3, 4}).shape(), (Shape{2, 3, 4}));
}

TEST_F(Infer, MatmulConvPool) {
  EXPECT_EQ(matmul(x23, x34).shape(), (Shape{2, 4}));
  EXPECT_EQ(matmul(x23, x23, false, true).shape(), (Shape{2, 2}));
  EXPECT_EQ(matmul(x34, x34, true, false).shape(), (Shape{4, 4}));
  Tensor b = placeholder(g, "b", DType::f32, {5, 4, 2});
  Tensor c = placeholder(g, "c", DType::f32, {5, 6, 2});
  EXPECT_EQ(matmul(b, c, false, true).shape(), (Shape{5, 4, 6}));
  Tensor w = placeholder(g, "w", DType::f32, {16, 3, 3, 3});
  EXPECT_EQ(conv2d(img, w).shape(), (Shape{2, 16, 6, 6}));
  EXPECT_EQ(conv2d(img, w, {2, 2}, {1, 1}).shape(), (Shape{2, 16, 4, 4}));
  // Grouped: the filter holds c / groups input channels; depthwise with a multiplier of 2.
  EXPECT_EQ(conv2d(img, placeholder(g, "dw", DType::f32, {6, 1, 3, 3}), {1, 1}, {1, 1}, 3).shape(),
            (Shape{2, 6, 8, 8}));
  EXPECT_EQ(max_pool2d(img, {2, 2}, {2, 2}).shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(avg_pool2d(img, {3, 3}, {2, 2}, {1, 1}).shape(), (Shape{2, 3, 4, 4}));
}

TEST_F(Infer, IndexOps) {
  Tensor labels = placeholder(g, "labels", DType::i32, {7});
  EXPECT_EQ(one_hot(labels, 10).shape(), (Shape{7, 10}));
  EXPECT_EQ(one_hot(labels, 10, DType::bf16).dtype(), DType::bf16);
  EXPECT_EQ(argmax(x34).shape(), (Shape{3}));
  EXPECT_EQ(argmax(x34, 0).dtype(), DType::i64);
  EXPECT_EQ(sparse_softmax_cross_entropy(x34, placeholder(g, "l3", DType::i32, {3})).shape(), (Shape{3}));
}

TEST_F(Infer, MatmulInnerDimensionMismatch) {
  EXPECT_GRAPH_ERROR(matmul(x23, x23), "[matmul]", "inner");
  EXPECT_GRAPH_ERROR(matmul(x4, x34), "[matmul]");
  EXPECT_GRAPH_ERROR(matmul(placeholder(g, "b1", DType::f32, {2, 2, 3}), placeholder(g, "b2", DType::f32, {3, 3, 4})),
                     "[matmul]", "batch");
}

// dense (made by the epilogue pass, never by the builder): its bias and addend inputs.
TEST_F(Infer, DenseInputsFollowItsBiasAndAddendFlags) {
  Tensor x24 = placeholder(g, "x24", DType::f32, {2, 4});
  auto dense = [&](std::vector<ValueId> in, int64_t bias, int64_t addend) {
    Attrs a;
    a.set("transpose_a", int64_t{0});
    a.set("transpose_b", int64_t{0});
    a.set("relu", int64_t{0});
    a.set("bias", bias);
    a.set("addend", addend);
    return g.add(Op::dense, in, a);
  };
  const ValueId ok = dense({x23.id(), x34.id(), x4.id(), x24.id()}, 1, 1);
  EXPECT_EQ(g.node(ok).shape, (Shape{2, 4}));
  EXPECT_EQ(g.node(dense({x23.id(), x34.id(), x24.id()}, 0, 1)).shape, (Shape{2, 4}));
  EXPECT_GRAPH_ERROR(dense({x23.id(), x34.id(), x4.id()}, 1, 1), "[dense]", "takes 4 inputs (a, b, bias, addend)",
                     "got 3");
  EXPECT_GRAPH_ERROR(dense({x23.id(), x34.id(), x4.id()}, 0, 1), "[dense]", "addend must be f32[2,4]", "got f32[4]");
  EXPECT_GRAPH_ERROR(dense({x23.id(), x34.id(), x24.id()}, 1, 0), "[dense]", "bias must be [4] or [1,4]");
  EXPECT_GRAPH_ERROR(dense({x23.id(), x34.id(), x4.id()}, 2, 0), "[dense]", "bias must be 0 or 1, got 2");
}

TEST_F(Infer, BroadcastMismatch) {
  EXPECT_GRAPH_ERROR(x23 + x4, "[add]", "[2,3]", "[4]");
  EXPECT_GRAPH_ERROR(maximum(x23, x34), "[maximum]");
  EXPECT_GRAPH_ERROR(select(less(x23, x23), x34, x34), "[select]");
  EXPECT_GRAPH_ERROR(broadcast_to(x23, {3, 3}), "[broadcast_to]");
}

TEST_F(Infer, DtypeMismatches) {
  Tensor h = placeholder(g, "h", DType::f16, {4});
  EXPECT_GRAPH_ERROR(x4 + h, "[add]", "cast");
  Tensor cond = placeholder(g, "cond", DType::f32, {4});
  EXPECT_GRAPH_ERROR(select(cond, x4, x4), "[select]", "bool");
  EXPECT_GRAPH_ERROR(exp(placeholder(g, "i", DType::i32, {4})), "[exp]");
  EXPECT_GRAPH_ERROR(one_hot(x4, 3), "[one_hot]");
  EXPECT_GRAPH_ERROR(less(x4, h), "[less]");
}

TEST_F(Infer, BadReshapeAndPerm) {
  EXPECT_GRAPH_ERROR(reshape(x23, {4, 2}), "[reshape]", "[4,2]");
  EXPECT_GRAPH_ERROR(reshape(x23, {-1, -1}), "[reshape]");
  EXPECT_GRAPH_ERROR(reshape(x23, {4, -1}), "[reshape]");
  EXPECT_GRAPH_ERROR(transpose(x23, {0, 0}), "[transpose]", "permutation");
  EXPECT_GRAPH_ERROR(transpose(x23, {0, 1, 2}), "[transpose]");
  EXPECT_GRAPH_ERROR(transpose(x23, {0, 2}), "[transpose]");
}

TEST_F(Infer, SlicePadConcatReduceArgmaxErrors) {
  EXPECT_GRAPH_ERROR(slice(x23, {0, 0}, {3, 3}), "[slice]", "axis 0");
  EXPECT_GRAPH_ERROR(slice(x23, {0, 2}, {2, 1}), "[slice]");
  EXPECT_GRAPH_ERROR(slice(x23, {0}, {1}), "[slice]");
  EXPECT_GRAPH_ERROR(pad(x23, {0, -1}, {0, 0}), "[pad]");
  EXPECT_GRAPH_ERROR(concat({x23, x34}, 0), "[concat]");
  EXPECT_GRAPH_ERROR(concat({x23, x4}, 0), "[concat]");
  EXPECT_GRAPH_ERROR(concat({}, 0), "[concat]");
  EXPECT_GRAPH_ERROR(reduce_sum(x23, {2}), "[reduce_sum]", "axis 2");
  EXPECT_GRAPH_ERROR(reduce_mean(x23, {1, -1}), "[reduce_mean]", "twice");
  EXPECT_GRAPH_ERROR(argmax(x23, 5), "[argmax]");
  EXPECT_GRAPH_ERROR(argmax(scalar_like(x23, 1.0)), "[argmax]");
}

TEST_F(Infer, ConvAndPoolErrors) {
  Tensor w = placeholder(g, "w", DType::f32, {4, 5, 3, 3});
  EXPECT_GRAPH_ERROR(conv2d(img, w), "[conv2d]", "channels");
  Tensor w3 = placeholder(g, "w3", DType::f32, {4, 3, 3, 3});
  EXPECT_GRAPH_ERROR(conv2d(x23, w3), "[conv2d]", "4-D");
  EXPECT_GRAPH_ERROR(conv2d(img, w3, {0, 1}), "[conv2d]", "stride");
  EXPECT_GRAPH_ERROR(conv2d(img, placeholder(g, "big", DType::f32, {4, 3, 9, 9})), "[conv2d]", "does not fit");
  Tensor dw = placeholder(g, "dw", DType::f32, {3, 1, 3, 3});
  EXPECT_GRAPH_ERROR(conv2d(img, dw, {1, 1}, {0, 0}, 0), "[conv2d]", "groups must be at least 1, got 0");
  EXPECT_GRAPH_ERROR(conv2d(img, w3, {1, 1}, {0, 0}, 2), "[conv2d]", "groups 2 must divide the input's 3 channels");
  EXPECT_GRAPH_ERROR(conv2d(img, placeholder(g, "w33", DType::f32, {3, 3, 3, 3}), {1, 1}, {0, 0}, 3), "[conv2d]",
                     "in 3 groups expects 9 (3 per group)");
  EXPECT_GRAPH_ERROR(max_pool2d(img, {2, 2}, {2, 2}, {2, 2}), "[max_pool2d]", "padding");
  EXPECT_GRAPH_ERROR(avg_pool2d(img, {0, 2}, {1, 1}), "[avg_pool2d]", "window");
}

TEST_F(Infer, AssignErrors) {
  Tensor v = variable(g, "v", DType::f32, {4});
  EXPECT_GRAPH_ERROR(assign(v, cast(x4, DType::f16)), "[assign]", "'v'");
  EXPECT_GRAPH_ERROR(assign(v, x34), "[assign]", "'v'");
  EXPECT_GRAPH_ERROR(assign(x4, x4), "[assign]", "variable");
}

TEST_F(Infer, NamesAndVariables) {
  EXPECT_GRAPH_ERROR(placeholder(g, "x23", DType::f32, {1}), "[name]", "'x23'");
  EXPECT_GRAPH_ERROR(exp(x4).named("x34"), "[name]", "'x34'");
  EXPECT_GRAPH_ERROR(variable(g, "", DType::f32, {1}), "[variable]", "named");
  EXPECT_GRAPH_ERROR(variable(g, "u", DType::f32, {1}, Init{"bogus"}), "[variable]", "bogus");
  EXPECT_GRAPH_ERROR(variable(g, "bools", DType::boolean, {1}), "[variable 'bools']");
  EXPECT_GRAPH_ERROR(placeholder(g, "neg", DType::f32, {-1, 2}), "[placeholder 'neg']", "negative");
  EXPECT_GRAPH_ERROR(g.lookup("nope", "fetch"), "[fetch]", "'nope'", "x23");
  g.add_output("o", x4.id());
  EXPECT_GRAPH_ERROR(g.add_output("o", x23.id()), "[output]", "'o'");
}

TEST_F(Infer, FailedCallLeavesTheGraphUnchanged) {
  const size_t before = g.size();
  EXPECT_THROW(matmul(x23, x23), GraphError);
  EXPECT_EQ(g.size(), before);
  EXPECT_THROW(placeholder(g, "x23", DType::f32, {1}), GraphError);
  EXPECT_EQ(g.size(), before);
  EXPECT_NO_THROW(verify(g));
}

TEST_F(Infer, DescribeNode) {
  Tensor y = exp(x4).named("logits");
  EXPECT_EQ(describe_node(g, y.id()), "%" + std::to_string(y.id()) + " (exp 'logits')");
  EXPECT_EQ(describe_node(g, x4.id()), "%2 (placeholder 'x4')");
}

// Element counts and byte sizes are checked without overflow: a wrapped size would get a
// small buffer that every index then overruns.
TEST_F(Infer, ShapesWhoseSizeOverflowsOrExceedsAnyMemoryAreErrors) {
  const int64_t big = (int64_t{1} << 62) + 1;
  EXPECT_GRAPH_ERROR(variable(g, "w", DType::f32, {big, 4}), "[variable 'w']", "more elements than a 64-bit count holds");
  EXPECT_GRAPH_ERROR(variable(g, "v", DType::f32, {INT64_MAX}), "[variable 'v']", "larger than any machine's memory");
  EXPECT_GRAPH_ERROR(placeholder(g, "p", DType::f32, {1 << 20, 1 << 20, 1 << 20}), "[placeholder 'p']", "2^48 bytes");
  const Tensor a = placeholder(g, "a", DType::f32, {1 << 25, 1});
  const Tensor b = placeholder(g, "b", DType::f32, {1, 1 << 25});
  EXPECT_GRAPH_ERROR(a + b, "[add]", "larger than any machine's memory");  // [2^25, 2^25] f32: 2^52 bytes
  EXPECT_GRAPH_ERROR(variable(g, "n", DType::f32, {-3, 4}), "negative extent");
  EXPECT_NO_THROW(variable(g, "ok", DType::f32, {1 << 20, 1 << 10}));  // 4 GiB is a size, if not this machine's
}

}  // namespace
}  // namespace kiln
