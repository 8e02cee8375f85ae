// Interpreter matmul, convolution and pooling against naive loops written here.
#include <gtest/gtest.h>

#include "kiln/ir/ops.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::eval;
using testkit::f32;
using Floats = std::vector<float>;

void expect_close(const Floats& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << what << " element " << i;
}

// C[b] = op(A[b]) op(B[b]) with op(A) [m,k], op(B) [k,n].
std::vector<double> naive_matmul(const Array& a, const Array& b, int64_t batch, int64_t m, int64_t n, int64_t k, bool ta,
                                 bool tb) {
  std::vector<double> c(batch * m * n, 0.0);
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t q = 0; q < k; ++q) {
          const double av = a.get(p * m * k + (ta ? q * m + i : i * k + q));
          const double bv = b.get(p * k * n + (tb ? j * k + q : q * n + j));
          c[(p * m + i) * n + j] += av * bv;
        }
  return c;
}

TEST(InterpMatmul, AllTransposeFlagsAndBatches) {
  testkit::TestRng rng(11);
  const int64_t m = 5, n = 3, k = 7;
  for (int64_t batch : {0, 1, 3})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        Shape as = ta ? Shape{k, m} : Shape{m, k}, bs = tb ? Shape{n, k} : Shape{k, n};
        if (batch) {
          as.insert(as.begin(), batch);
          bs.insert(bs.begin(), batch);
        }
        Graph g;
        Tensor a = placeholder(g, "a", DType::f32, as);
        Tensor b = placeholder(g, "b", DType::f32, bs);
        const Feeds feeds{{"a", testkit::uniform_array(rng, as, -1, 1)}, {"b", testkit::uniform_array(rng, bs, -1, 1)}};
        const Array c = eval(g, matmul(a, b, ta, tb).id(), feeds);
        const std::string what = "batch " + std::to_string(batch) + " ta " + std::to_string(ta) + " tb " + std::to_string(tb);
        EXPECT_EQ(c.shape().back(), n) << what;
        expect_close(c.to_floats(), naive_matmul(feeds.at("a"), feeds.at("b"), batch ? batch : 1, m, n, k, ta, tb), 1e-5, what);
      }
}

TEST(InterpMatmul, EmptyInnerDimensionGivesZeros) {
  Graph g;
  Tensor a = placeholder(g, "a", DType::f32, {2, 0});
  Tensor b = placeholder(g, "b", DType::f32, {0, 3});
  const Array c = eval(g, matmul(a, b).id(), {{"a", Array(DType::f32, {2, 0})}, {"b", Array(DType::f32, {0, 3})}});
  EXPECT_EQ(c.to_floats(), Floats(6, 0.0f));
}

std::vector<double> naive_conv(const Array& x, const Array& w, int64_t sh, int64_t sw, int64_t ph, int64_t pw, Shape& out) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const int64_t oh = (xs[2] + 2 * ph - ws[2]) / sh + 1, ow = (xs[3] + 2 * pw - ws[3]) / sw + 1;
  out = {xs[0], ws[0], oh, ow};
  std::vector<double> y(numel(out), 0.0);
  for (int64_t b = 0; b < xs[0]; ++b)
    for (int64_t o = 0; o < ws[0]; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t c = 0; c < xs[1]; ++c)
            for (int64_t p = 0; p < ws[2]; ++p)
              for (int64_t q = 0; q < ws[3]; ++q) {
                const int64_t h = i * sh - ph + p, v = j * sw - pw + q;
                if (h < 0 || h >= xs[2] || v < 0 || v >= xs[3]) continue;
                y[((b * ws[0] + o) * oh + i) * ow + j] +=
                    x.get(((b * xs[1] + c) * xs[2] + h) * xs[3] + v) * w.get(((o * xs[1] + c) * ws[2] + p) * ws[3] + q);
              }
  return y;
}

TEST(InterpConv2d, MatchesNaiveLoops) {
  testkit::TestRng rng(5);
  struct C { Shape x, w; int64_t sh, sw, ph, pw; };
  const C cases[] = {{{2, 3, 6, 6}, {4, 3, 3, 3}, 1, 1, 0, 0}, {{2, 3, 6, 6}, {4, 3, 3, 3}, 1, 1, 1, 1},
                     {{1, 2, 7, 5}, {3, 2, 3, 3}, 2, 2, 1, 1}, {{1, 1, 5, 6}, {2, 1, 2, 3}, 2, 1, 1, 0}};
  for (const C& c : cases) {
    Graph g;
    Tensor x = placeholder(g, "x", DType::f32, c.x);
    Tensor w = placeholder(g, "w", DType::f32, c.w);
    const Feeds feeds{{"x", testkit::uniform_array(rng, c.x, -1, 1)}, {"w", testkit::uniform_array(rng, c.w, -1, 1)}};
    const Array y = eval(g, conv2d(x, w, {c.sh, c.sw}, {c.ph, c.pw}).id(), feeds);
    Shape want_shape;
    const auto want = naive_conv(feeds.at("x"), feeds.at("w"), c.sh, c.sw, c.ph, c.pw, want_shape);
    EXPECT_EQ(y.shape(), want_shape);
    expect_close(y.to_floats(), want, 1e-5, "conv x" + shape_str(c.x) + " w" + shape_str(c.w));
  }
}

TEST(InterpPool, MaxPoolByHand) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {1, 1, 4, 4});
  const Feeds feeds{{"x", f32({1, 1, 4, 4}, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, -8})}};
  EXPECT_EQ(eval(g, max_pool2d(x, {2, 2}, {2, 2}).id(), feeds).to_floats(), (Floats{6, 8, -1, -3}));
  // Padding never wins, even over negative values.
  const Array p = eval(g, max_pool2d(x, {3, 3}, {2, 2}, {1, 1}).id(), feeds);
  EXPECT_EQ(p.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(p.to_floats(), (Floats{6, 8, 6, 8}));
  const Feeds neg{{"x", f32({1, 1, 4, 4}, Floats(16, -5.0f))}};
  EXPECT_EQ(eval(g, max_pool2d(x, {3, 3}, {2, 2}, {1, 1}).id(), neg).to_floats(), Floats(4, -5.0f));
}

TEST(InterpPool, AvgPoolExcludesPadding) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {1, 1, 2, 2});
  const Feeds feeds{{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}};
  EXPECT_EQ(eval(g, avg_pool2d(x, {2, 2}, {1, 1}).id(), feeds).to_floats(), (Floats{2.5f}));
  // 2x2 windows, stride 1, padding 1: a 3x3 output; the corners see one real element.
  EXPECT_EQ(eval(g, avg_pool2d(x, {2, 2}, {1, 1}, {1, 1}).id(), feeds).to_floats(),
            (Floats{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
}

TEST(InterpPool, MultipleChannelsAndBatches) {
  Graph g;
  Tensor x = placeholder(g, "x", DType::f32, {2, 2, 2, 2});
  Floats v(16);
  for (int i = 0; i < 16; ++i) v[i] = float(i);
  const Feeds feeds{{"x", f32({2, 2, 2, 2}, v)}};
  EXPECT_EQ(eval(g, max_pool2d(x, {2, 2}, {2, 2}).id(), feeds).to_floats(), (Floats{3, 7, 11, 15}));
  EXPECT_EQ(eval(g, avg_pool2d(x, {2, 2}, {2, 2}).id(), feeds).to_floats(), (Floats{1.5f, 5.5f, 9.5f, 13.5f}));
}

}  // namespace
}  // namespace kiln
