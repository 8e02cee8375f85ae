// oneDNN pooling against the interpreter's kernels, and max pooling's gradient from the
// forward's record of its maxima (the compiled step's route) against recomputing it.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>

#include "backend/interp/kernels.h"
#include "backend/onednn/onednn.h"
#include "kiln/ops.h"
#include "support/backend_compare.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

struct Geometry {
  const char* name;
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
};

const Geometry kGeometries[] = {
    {"cnn_2x2", 3, 32, 28, 28, 2, 2, 2, 2, 0, 0},
    {"odd_size_2x2", 2, 5, 7, 9, 2, 2, 2, 2, 0, 0},
    {"overlapping_3x3", 2, 3, 6, 5, 3, 3, 1, 1, 0, 0},
    {"padded_3x3_stride2", 1, 17, 9, 7, 3, 3, 2, 2, 1, 1},
};

// No two positions of any window up to 4x4 hold the same value, so the backends cannot
// differ by which of two equal maxima gets the gradient: each plane takes its values from
// a shuffled table of 16 (exact in bfloat16), indexed by (row % 4, column % 4), with a
// random sign and power-of-two scale.
Array window_distinct(DType t, Shape shape, uint64_t seed) {
  Array a(DType::f32, shape);
  testkit::TestRng rng(seed);
  const int64_t h = shape[2], w = shape[3], planes = shape[0] * shape[1];
  for (int64_t p = 0; p < planes; ++p) {
    int64_t table[16];
    for (int64_t i = 0; i < 16; ++i) table[i] = i;
    for (int64_t i = 15; i > 0; --i) std::swap(table[i], table[rng.below(i + 1)]);
    const double scale = (rng.below(2) ? 1.0 : -1.0) * double(int64_t{1} << rng.below(6));
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j) a.set((p * h + i) * w + j, scale * (1 + table[i % 4 * 4 + j % 4] / 16.0));
  }
  return t == DType::f32 ? a : Array::from_floats(t, a.shape(), a.to_floats());
}

void PrintTo(const Geometry& g, std::ostream* os) { *os << g.name; }

class OnednnPool : public ::testing::TestWithParam<Geometry> {};

TEST_P(OnednnPool, MaxAndAvgMatchTheInterpreterWithAndWithoutTheRecord) {
  const Geometry& q = GetParam();
  for (DType t : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    const bool bf16 = t == DType::bf16;
    // Sums (avg pooling, overlapping max gradients) may round differently in bfloat16.
    const testkit::Tolerance tol = bf16 ? testkit::Tolerance{1e-2, 1e-2} : testkit::Tolerance{1e-6, 1e-6};
    testkit::TestRng rng(testkit::seed_of(q.name));
    Graph g;
    const Tensor x = placeholder(g, "x", t, {q.n, q.c, q.h, q.w});
    const std::vector<int64_t> window{q.kh, q.kw}, stride{q.sh, q.sw}, pad{q.ph, q.pw};
    const Tensor ymax = max_pool2d(x, window, stride, pad);
    const Tensor yavg = avg_pool2d(x, window, stride, pad);
    const Tensor dy = placeholder(g, "dy", t, ymax.shape());
    const ValueId dmax = g.add(Op::max_pool2d_grad, {x.id(), dy.id()}, g.node(ymax.id()).attrs);
    Attrs avg_attrs = g.node(yavg.id()).attrs;
    avg_attrs.set("input_shape", x.shape());
    const ValueId davg = g.add(Op::avg_pool2d_grad, {dy.id()}, avg_attrs);
    const onednn::ConvGeom geom{q.n, q.c, q.h, q.w, q.c, q.kh, q.kw, ymax.dim(2), ymax.dim(3), q.sh, q.sw, q.ph, q.pw};

    const Array xa = window_distinct(t, x.shape(), testkit::seed_of(q.name));
    Array dya = testkit::uniform_array(rng, ymax.shape(), -1, 1);
    if (bf16) dya = Array::from_floats(t, dya.shape(), dya.to_floats());
    const Array* x_in[] = {&xa};
    const Array* grad_in[] = {&xa, &dya};
    const Array* dy_in[] = {&dya};

    const int64_t ws_bytes = onednn::pool2d_workspace_bytes(onednn::PoolKind::max, bf16, geom);
    EXPECT_GT(ws_bytes, 0);
    EXPECT_EQ(onednn::pool2d_workspace_bytes(onednn::PoolKind::avg, bf16, geom), 0);
    std::vector<std::byte> ws(ws_bytes);
    Array y = Array::uninitialized(t, ymax.shape());
    onednn::pool2d(onednn::PoolKind::max, bf16, xa.bytes(), y.bytes(), geom, ws.data());
    const testkit::Tolerance exact{0, 0};
    EXPECT_TRUE(testkit::arrays_close("max forward", interp::run_kernel(g.node(ymax.id()), x_in), y, exact));
    const Array want_dx = interp::run_kernel(g.node(dmax), grad_in);
    Array dx = Array::uninitialized(t, x.shape());
    onednn::pool2d_grad(onednn::PoolKind::max, bf16, xa.bytes(), dya.bytes(), dx.bytes(), geom);
    EXPECT_TRUE(testkit::arrays_close("max gradient, forward recomputed", want_dx, dx, tol));
    std::memset(dx.bytes(), 0xff, dx.nbytes());
    onednn::pool2d_grad(onednn::PoolKind::max, bf16, nullptr, dya.bytes(), dx.bytes(), geom, ws.data());
    EXPECT_TRUE(testkit::arrays_close("max gradient from the forward's record", want_dx, dx, tol));

    onednn::pool2d(onednn::PoolKind::avg, bf16, xa.bytes(), y.bytes(), geom);
    EXPECT_TRUE(testkit::arrays_close("avg forward", interp::run_kernel(g.node(yavg.id()), x_in), y, tol));
    onednn::pool2d_grad(onednn::PoolKind::avg, bf16, nullptr, dya.bytes(), dx.bytes(), geom);
    EXPECT_TRUE(testkit::arrays_close("avg gradient", interp::run_kernel(g.node(davg), dy_in), dx, tol));
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, OnednnPool, ::testing::ValuesIn(kGeometries),
                         [](const ::testing::TestParamInfo<Geometry>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
