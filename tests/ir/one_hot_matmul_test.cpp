// matmul(one_hot(ids), w) is built as a lenient gather of w's rows (ops.h): the values a
// one-hot product gives (an index out of range: a row of zeros), its gradient, no index
// bound at feed time, and the products that are left as they are.
#include <gtest/gtest.h>

#include "ir/index_bounds.h"
#include "kiln/autodiff/grad.h"
#include "kiln/backend/runtime.h"
#include "kiln/ir/ops.h"

namespace kiln {
namespace {

struct OneHotModel {
  Graph g;
  Tensor ids, w, y;
};

// ids [4, 3], one_hot depth 5 -> [4, 3, 5]; time step 1 as tf.unstack takes it (a slice and
// a reshape), times w [5, 2].
void build(OneHotModel& m) {
  m.ids = placeholder(m.g, "ids", DType::i32, {4, 3});
  m.w = variable(m.g, "w", DType::f32, {5, 2});
  const Tensor step = reshape(slice(one_hot(m.ids, 5), {0, 1, 0}, {4, 2, 5}), {4, 5});
  m.y = matmul(step, m.w);
}

const Node& producer(const Tensor& t) { return t.graph().node(t.id()); }

TEST(OneHotMatmul, IsALenientGatherOfTheRowsWithTheProductsValuesAndGradient) {
  OneHotModel m;
  build(m);
  ASSERT_EQ(producer(m.y).op, Op::gather);
  EXPECT_EQ(producer(m.y).attrs.i("lenient"), 1);
  EXPECT_EQ(m.y.shape(), (Shape{4, 2}));
  const Tensor dw = grad(reduce_sum(m.y * m.y), {m.w})[0];
  m.g.add_output("y", m.y.id());
  m.g.add_output("dw", dw.id());
  // Column 1 of ids holds a valid row, a repeated one, and two out of range (zero rows).
  Array ids(DType::i32, {4, 3});
  const int32_t v[12] = {0, 3, 1, 0, 3, 2, 4, 7, 0, 1, -1, 2};
  for (int i = 0; i < 12; ++i) ids.set(i, v[i]);
  Array w(DType::f32, {5, 2});
  for (int i = 0; i < 10; ++i) w.set(i, 0.5 * i - 1.0);
  Variables vars{{"w", w}};
  const Fetches out = make_interpreter(m.g)->run({{"ids", ids}}, vars);
  const Array& y = out.at("y");
  const int picked[4] = {3, 3, 7, -1};
  double dw_want[10] = {};
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c) {
      const bool in = picked[r] >= 0 && picked[r] < 5;
      const double want = in ? w.get(picked[r] * 2 + c) : 0.0;
      EXPECT_EQ(y.get(r * 2 + c), want) << "row " << r << " column " << c;
      if (in) dw_want[picked[r] * 2 + c] += 2 * want;
    }
  }
  for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(out.at("dw").get(i), dw_want[i]) << "dw[" << i << "]";
  // TensorFlow's one_hot makes no error of an index out of range, and neither does this.
  EXPECT_TRUE(index_bounds(m.g).empty());
}

TEST(OneHotMatmul, OtherProductsStayProducts) {
  Graph g;
  const Tensor ids = placeholder(g, "ids", DType::i32, {4});
  const Tensor oh = one_hot(ids, 5);
  const Tensor w = variable(g, "w", DType::f32, {5, 2});
  EXPECT_EQ(producer(matmul(oh * 2.0, w)).op, Op::matmul);  // on_value 2
  EXPECT_EQ(producer(matmul(slice(oh, {0, 0}, {4, 4}), slice(w, {0, 0}, {4, 2}))).op, Op::matmul);  // depth cut
  EXPECT_EQ(producer(matmul(oh, variable(g, "wt", DType::f32, {2, 5}), false, true)).op, Op::matmul);
  EXPECT_EQ(producer(matmul(placeholder(g, "x", DType::f32, {4, 5}), w)).op, Op::matmul);
  // A reshape that moves the depth axis, and one from a scalar, end the search too.
  const Tensor moved = reshape(one_hot(placeholder(g, "ids2", DType::i32, {2}), 10), {4, 5});
  EXPECT_EQ(producer(matmul(moved, w)).op, Op::matmul);
  const Tensor lone = reshape(reshape(placeholder(g, "s", DType::f32, {}), {1, 1}), {1, 1});
  EXPECT_EQ(producer(matmul(lone, variable(g, "w1", DType::f32, {1, 3}))).op, Op::matmul);
}

}  // namespace
}  // namespace kiln
