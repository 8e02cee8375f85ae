// oneDNN convolution (all three passes, float32 and bfloat16) against the interpreter's
// kernels, over geometries that reach both of conv2d's routes: channel-blocked layouts
// with reorders (16+ output channels) and the plain NCHW route (few channels), with odd
// channel counts that leave blocks partly padded, strides, padding and 1x1/5x5 windows;
// grouped and depthwise ones, including the small padded maps for which oneDNN has no
// depthwise kernel and kiln's own loops run (depthwise_loops.h, also tested alone).
#include <gtest/gtest.h>

#include "backend/interp/kernels.h"
#include "backend/onednn/depthwise_loops.h"
#include "backend/onednn/onednn.h"
#include "kiln/ir/ops.h"
#include "support/backend_compare.h"
#include "support/test_arrays.h"

namespace kiln {
namespace {

using testkit::TestRng;

struct Geometry {
  const char* name;
  int64_t n, c, h, w, o, kh, kw, sh, sw, ph, pw, groups = 1;
};

const Geometry kGeometries[] = {
    {"cnn_second_layer", 4, 32, 14, 14, 64, 3, 3, 1, 1, 1, 1},
    {"cnn_first_layer", 4, 1, 28, 28, 32, 3, 3, 1, 1, 1, 1},
    {"odd_channels_rect_stride", 3, 17, 7, 5, 20, 3, 2, 2, 1, 1, 0},
    {"stride2_pad1", 2, 16, 9, 9, 16, 3, 3, 2, 2, 1, 1},
    {"one_by_one", 2, 24, 5, 5, 48, 1, 1, 1, 1, 0, 0},
    {"five_by_five_pad2", 2, 16, 8, 8, 32, 5, 5, 1, 1, 2, 2},
    {"few_channels_plain", 2, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1},
    // Stored plain (fewer than 16 channels) but run on blocked copies where oneDNN has only
    // im2col + gemm for plain ones: an MNIST first layer, and ten channels into twenty.
    {"mnist_first_layer_ten_out", 4, 1, 28, 28, 10, 5, 5, 1, 1, 2, 2},
    {"ten_in_twenty_out", 4, 10, 14, 14, 20, 5, 5, 1, 1, 2, 2},
    {"few_in_many_out_strided", 2, 3, 11, 10, 40, 3, 3, 2, 3, 0, 1},
    {"depthwise", 4, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 32},
    {"depthwise_x2_stride2", 2, 24, 9, 8, 48, 3, 3, 2, 2, 1, 1, 24},
    {"depthwise_2x2_map_pad1", 8, 48, 2, 2, 48, 3, 3, 1, 1, 1, 1, 48},
    {"depthwise_1x1_map_pad1", 8, 96, 1, 1, 96, 3, 3, 1, 1, 1, 1, 96},
    {"depthwise_few_channels", 2, 3, 6, 5, 3, 3, 3, 1, 1, 1, 0, 3},
    {"two_groups", 2, 16, 6, 6, 32, 3, 3, 1, 1, 1, 1, 2},
};

Array random(TestRng& rng, DType t, Shape shape) {
  Array a = testkit::uniform_array(rng, std::move(shape), -1, 1);
  return t == DType::f32 ? a : Array::from_floats(t, a.shape(), a.to_floats());
}

void PrintTo(const Geometry& g, std::ostream* os) { *os << g.name; }

class OnednnConv : public ::testing::TestWithParam<Geometry> {};

// The graph of a convolution with geometry q and its two gradients, for the interpreter.
struct ConvGraph {
  Graph g;
  Tensor x, w, y, dy;
  ValueId dx, dw;
  onednn::ConvGeom geom;

  ConvGraph(const Geometry& q, DType t) {
    x = placeholder(g, "x", t, {q.n, q.c, q.h, q.w});
    w = placeholder(g, "w", t, {q.o, q.c / q.groups, q.kh, q.kw});
    y = conv2d(x, w, {q.sh, q.sw}, {q.ph, q.pw}, q.groups);
    dy = placeholder(g, "dy", t, y.shape());
    Attrs common{{"stride", std::vector<int64_t>{q.sh, q.sw}}, {"padding", std::vector<int64_t>{q.ph, q.pw}}};
    if (q.groups > 1) common.set("groups", q.groups);
    Attrs in_attrs = common, w_attrs = common;
    in_attrs.set("input_shape", x.shape());
    w_attrs.set("filter_shape", w.shape());
    dx = g.add(Op::conv2d_backward_input, {dy.id(), w.id()}, in_attrs);
    dw = g.add(Op::conv2d_backward_filter, {x.id(), dy.id()}, w_attrs);
    geom = {q.n, q.c, q.h, q.w, q.o, q.kh, q.kw, y.dim(2), y.dim(3), q.sh, q.sw, q.ph, q.pw, q.groups};
  }
};

TEST_P(OnednnConv, EveryPassMatchesTheInterpreter) {
  const Geometry& q = GetParam();
  for (DType t : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(t));
    TestRng rng(testkit::seed_of(q.name));
    ConvGraph c(q, t);
    const Graph& g = c.g;
    const Tensor &x = c.x, &w = c.w, &y = c.y;
    const ValueId dx = c.dx, dw = c.dw;
    const onednn::ConvGeom& geom = c.geom;
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

// A pass whose few-channel activations oneDNN would convolve by im2col + gemm runs its
// direct kernel on blocked copies instead (3-6x faster on an MNIST first layer). Where the
// CPU has AVX-512, oneDNN has such kernels for these shapes.
TEST(OnednnConv, FewChannelPassesRunDirectKernelsOnBlockedCopies) {
  const onednn::ConvGeom first{100, 1, 28, 28, 10, 5, 5, 28, 28, 1, 1, 2, 2};
  const onednn::ConvGeom second{100, 10, 14, 14, 20, 5, 5, 14, 14, 1, 1, 2, 2};
  const std::pair<onednn::ConvPass, const onednn::ConvGeom*> passes[] = {
      {onednn::ConvPass::forward, &first}, {onednn::ConvPass::backward_filter, &first},
      {onednn::ConvPass::backward_input, &second}};
  const bool avx512 = __builtin_cpu_supports("avx512f");
  for (const auto& [pass, g] : passes) {
    const std::string kernel = onednn::conv_kernel(pass, false, *g);
    SCOPED_TRACE(kernel);
    EXPECT_FALSE(kernel.empty());
    if (!avx512) continue;
    EXPECT_EQ(kernel.find("gemm"), std::string::npos);
    EXPECT_NE(kernel.find("on blocked layouts"), std::string::npos);
    // What kiln stores them in stays plain: the layout plan is not asked to pad them.
    const onednn::ConvLayouts stored = onednn::preferred_layouts(pass, false, *g);
    EXPECT_EQ(pass == onednn::ConvPass::backward_input ? stored.x : stored.y, 0);
  }
}

// kiln's depthwise loops alone (whether oneDNN would take them on this CPU or not): every
// pass, with the forward's bias and ReLU and the filter gradient's bias gradient.
class DepthwiseLoops : public ::testing::TestWithParam<Geometry> {};

TEST_P(DepthwiseLoops, EveryPassMatchesTheInterpreter) {
  const Geometry& q = GetParam();
  ConvGraph c(q, DType::f32);
  ASSERT_TRUE(onednn::depthwise(c.geom));
  TestRng rng(testkit::seed_of(q.name));
  const Array xa = random(rng, DType::f32, c.x.shape()), wa = random(rng, DType::f32, c.w.shape());
  const Array dya = random(rng, DType::f32, c.y.shape()), bias = random(rng, DType::f32, {q.o});
  const testkit::Tolerance tol{1e-5, 1e-5};
  const Array* fwd_in[] = {&xa, &wa};
  Array y = interp::run_kernel(c.g.node(c.y.id()), fwd_in);
  std::vector<float> want = y.to_floats();
  const std::vector<float> b = bias.to_floats();
  for (size_t i = 0; i < want.size(); ++i) {
    const float v = want[i] + b[i / (c.y.dim(2) * c.y.dim(3)) % q.o];
    want[i] = v < 0 ? 0.0f : v;
  }
  Array out = Array::uninitialized(DType::f32, c.y.shape());
  onednn::depthwise_loops(onednn::ConvPass::forward, xa.data<float>(), wa.data<float>(), out.data<float>(), c.geom,
                          bias.data<float>(), true, nullptr);
  EXPECT_TRUE(testkit::arrays_close("forward+bias+relu", Array::from_floats(DType::f32, c.y.shape(), want), out, tol));
  const Array* bd_in[] = {&dya, &wa};
  Array dx = Array::uninitialized(DType::f32, c.x.shape());
  onednn::depthwise_loops(onednn::ConvPass::backward_input, dya.data<float>(), wa.data<float>(), dx.data<float>(),
                          c.geom, nullptr, false, nullptr);
  EXPECT_TRUE(testkit::arrays_close("backward_input", interp::run_kernel(c.g.node(c.dx), bd_in), dx, tol));
  const Array* bw_in[] = {&xa, &dya};
  Array dw = Array::uninitialized(DType::f32, c.w.shape());
  std::vector<float> db(static_cast<size_t>(q.o));
  onednn::depthwise_loops(onednn::ConvPass::backward_filter, xa.data<float>(), dya.data<float>(), dw.data<float>(),
                          c.geom, nullptr, false, db.data());
  EXPECT_TRUE(testkit::arrays_close("backward_filter", interp::run_kernel(c.g.node(c.dw), bw_in), dw, tol));
  const std::vector<float> dyf = dya.to_floats();
  const int64_t plane = c.y.dim(2) * c.y.dim(3);
  for (int64_t o = 0; o < q.o; ++o) {
    double sum = 0;
    for (int64_t n = 0; n < q.n; ++n)
      for (int64_t i = 0; i < plane; ++i) sum += dyf[static_cast<size_t>((n * q.o + o) * plane + i)];
    EXPECT_NEAR(db[static_cast<size_t>(o)], sum, 1e-4) << "bias gradient of channel " << o;
  }
}

std::string name_of(const ::testing::TestParamInfo<Geometry>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Geometries, OnednnConv, ::testing::ValuesIn(kGeometries), name_of);

std::vector<Geometry> depthwise_geometries() {
  std::vector<Geometry> out;
  for (const Geometry& q : kGeometries)
    if (q.groups > 1 && q.groups == q.c) out.push_back(q);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Geometries, DepthwiseLoops, ::testing::ValuesIn(depthwise_geometries()), name_of);

}  // namespace
}  // namespace kiln
