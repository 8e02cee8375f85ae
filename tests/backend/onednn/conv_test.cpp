// oneDNN convolution (all three passes, float32 and bfloat16) against the interpreter's
// kernels, over geometries that reach both of conv2d's routes: channel-blocked layouts
// with reorders (16+ output channels) and the plain NCHW route (few channels), with odd
// channel counts that leave blocks partly padded, strides, padding and 1x1/5x5 windows.
#include <gtest/gtest.h>

#include "backend/interp/kernels.h"
#include "backend/onednn/onednn.h"
#include "kiln/ops.h"
#include "support/backend_compare.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::TestRng;

struct Geometry {
  const char* name;
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw;
};

const Geometry kGeometries[] = {
    {"cnn_second_layer", 4, 32, 14, 14, 64, 3, 3, 1, 1, 1, 1},
    {"cnn_first_layer", 4, 1, 28, 28, 32, 3, 3, 1, 1, 1, 1},
    {"odd_channels_rect_stride", 3, 17, 7, 5, 20, 3, 2, 2, 1, 1, 0},
    {"stride2_pad1", 2, 16, 9, 9, 16, 3, 3, 2, 2, 1, 1},
    {"one_by_one", 2, 24, 5, 5, 48, 1, 1, 1, 1, 0, 0},
    {"five_by_five_pad2", 2, 16, 8, 8, 32, 5, 5, 1, 1, 2, 2},
    {"few_channels_plain", 2, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1},
    {"few_in_many_out_strided", 2, 3, 11, 10, 40, 3, 3, 2, 3, 0, 1},
};

Array random(TestRng& rng, DType t, Shape shape) {
  Array a = testkit::uniform_array(rng, std::move(shape), -1, 1);
  return t == DType::f32 ? a : Array::from_floats(t, a.shape(), a.to_floats());
}

void PrintTo(const Geometry& g, std::ostream* os) { *os << g.name; }

class OnednnConv : public ::testing::TestWithParam<Geometry> {};

TEST_P(OnednnConv, EveryPassMatchesTheInterpreter) {
  const Geometry& q = GetParam();
  for (DType t : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    TestRng rng(testkit::seed_of(q.name));
    Graph g;
    const Tensor x = placeholder(g, "x", t, {q.n, q.c, q.h, q.w});
    const Tensor w = placeholder(g, "w", t, {q.o, q.c, q.kh, q.kw});
    const Tensor y = conv2d(x, w, {q.sh, q.sw}, {q.ph, q.pw});
    const Tensor dy = placeholder(g, "dy", t, y.shape());
    const Attrs common{{"stride", std::vector<int64_t>{q.sh, q.sw}}, {"padding", std::vector<int64_t>{q.ph, q.pw}}};
    Attrs in_attrs = common, w_attrs = common;
    in_attrs.set("input_shape", x.shape());
    w_attrs.set("filter_shape", w.shape());
    const ValueId dx = g.add(Op::conv2d_backward_input, {dy.id(), w.id()}, in_attrs);
    const ValueId dw = g.add(Op::conv2d_backward_filter, {x.id(), dy.id()}, w_attrs);

    const onednn::ConvGeom geom{q.n, q.c, q.h, q.w, q.o, q.kh, q.kw, y.dim(2), y.dim(3), q.sh, q.sw, q.ph, q.pw};
    const testkit::Tolerance tol = t == DType::f32 ? testkit::Tolerance{1e-5, 1e-5} : testkit::Tolerance{1e-2, 1e-2};
    // Twice, with new values: the second run reuses the cached primitive and scratch.
    for (int round = 0; round < 2; ++round) {
      const Array xa = random(rng, t, x.shape()), wa = random(rng, t, w.shape()), dya = random(rng, t, y.shape());
      const Array* fwd_in[] = {&xa, &wa};
      const Array* bd_in[] = {&dya, &wa};
      const Array* bw_in[] = {&xa, &dya};
      const bool bf16 = t == DType::bf16;
      Array out = Array::uninitialized(t, y.shape());
      onednn::conv2d(onednn::ConvPass::forward, bf16, xa.bytes(), wa.bytes(), out.bytes(), geom);
      EXPECT_TRUE(testkit::arrays_close("forward", interp::run_kernel(g.node(y.id()), fwd_in), out, tol));
      Array dxa = Array::uninitialized(t, x.shape());
      onednn::conv2d(onednn::ConvPass::backward_input, bf16, dya.bytes(), wa.bytes(), dxa.bytes(), geom);
      EXPECT_TRUE(testkit::arrays_close("backward_input", interp::run_kernel(g.node(dx), bd_in), dxa, tol));
      Array dwa = Array::uninitialized(t, w.shape());
      onednn::conv2d(onednn::ConvPass::backward_filter, bf16, xa.bytes(), dya.bytes(), dwa.bytes(), geom);
      EXPECT_TRUE(testkit::arrays_close("backward_filter", interp::run_kernel(g.node(dw), bw_in), dwa, tol));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, OnednnConv, ::testing::ValuesIn(kGeometries),
                         [](const ::testing::TestParamInfo<Geometry>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
