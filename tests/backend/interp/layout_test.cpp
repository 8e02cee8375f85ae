// Interpreter layout kernels: reshape, transpose, broadcast_to, slice, pad, concat.
#include <gtest/gtest.h>

#include "kiln/ir/ops.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::eval;
using testkit::f32;
using Floats = std::vector<float>;

Floats iota(int n) {
  Floats v(n);
  for (int i = 0; i < n; ++i) v[i] = float(i);
  return v;
}

TEST(InterpLayout, TransposeMatchesIndexArithmetic) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3, 4});
  const Array r = eval(g, transpose(x, {2, 0, 1}).id(), {{"x", f32({2, 3, 4}, iota(24))}});
  ASSERT_EQ(r.shape(), (Shape{4, 2, 3}));
  const Floats v = r.to_floats();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(v[(i * 2 + j) * 3 + k], float((j * 3 + k) * 4 + i));
}

TEST(InterpLayout, TransposeKeepsBfloat16Bits) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::bf16, {2, 2});
  const Array in = Array::from_floats(DType::bf16, {2, 2}, Floats{1.5f, -2, 0.1f, 3e30f});
  const Array r = eval(g, transpose(x, {1, 0}).id(), {{"x", in}});
  EXPECT_EQ(r.dtype(), DType::bf16);
  EXPECT_EQ(r.data<uint16_t>()[1], in.data<uint16_t>()[2]);
  EXPECT_EQ(r.data<uint16_t>()[3], in.data<uint16_t>()[3]);
}

TEST(InterpLayout, ReshapeKeepsRowMajorOrder) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Array r = eval(g, reshape(x, {3, -1}).id(), {{"x", f32({2, 3}, iota(6))}});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.to_floats(), iota(6));
}

TEST(InterpLayout, BroadcastTo) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 1});
  const Array r = eval(g, broadcast_to(x, {2, 2, 3}).id(), {{"x", f32({2, 1}, {7, 8})}});
  EXPECT_EQ(r.to_floats(), (Floats{7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8}));
}

TEST(InterpLayout, Slice) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {3, 4});
  const Array r = eval(g, slice(x, {1, 1}, {3, 3}).id(), {{"x", f32({3, 4}, iota(12))}});
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(r.to_floats(), (Floats{5, 6, 9, 10}));
}

TEST(InterpLayout, PadFillsZeros) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 2});
  const Array r = eval(g, pad(x, {1, 0}, {0, 2}).id(), {{"x", f32({2, 2}, {1, 2, 3, 4})}});
  EXPECT_EQ(r.shape(), (Shape{3, 4}));
  EXPECT_EQ(r.to_floats(), (Floats{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
}

TEST(InterpLayout, ConcatThreeInputsOnTheMiddleAxis) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {2, 1, 2});
  Tensor b = placeholder(g, "b", DType::f32, {2, 2, 2});
  Tensor c = placeholder(g, "c", DType::f32, {2, 0, 2});
  const Feeds feeds{{"a", f32({2, 1, 2}, {1, 2, 3, 4})},
                    {"b", f32({2, 2, 2}, {10, 11, 12, 13, 14, 15, 16, 17})},
                    {"c", Array(DType::f32, {2, 0, 2})}};
  const Array r = eval(g, concat({a, b, c, a}, 1).id(), feeds);
  EXPECT_EQ(r.shape(), (Shape{2, 4, 2}));
  EXPECT_EQ(r.to_floats(), (Floats{1, 2, 10, 11, 12, 13, 1, 2, 3, 4, 14, 15, 16, 17, 3, 4}));
}

TEST(InterpLayout, ConcatOnTheFirstAxisOfIntegers) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::i64, {1, 2});
  Tensor b = placeholder(g, "b", DType::i64, {2, 2});
  const Feeds feeds{{"a", testkit::ints(DType::i64, {1, 2}, {1, 2})}, {"b", testkit::ints(DType::i64, {2, 2}, {3, 4, 5, 6})}};
  EXPECT_EQ(eval(g, concat({a, b}, 0).id(), feeds).to_ints(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace kiln
