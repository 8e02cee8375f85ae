// The CNN of the issue: two conv/ReLU/pool stages and two dense layers.
#include "kiln/base/error.h"
#include "kiln/models/models.h"

namespace kiln {

Tensor conv3x3_relu(const Tensor& x, int64_t out_channels, const std::string& name, int64_t seed) {
  Graph& g = x.graph();
  const Tensor w = variable(g, name + "/filter", x.dtype(), {out_channels, x.dim(1), 3, 3}, Init::he_uniform(seed));
  const Tensor b = variable(g, name + "/bias", x.dtype(), {out_channels}, Init::zeros());
  return relu(conv2d(x, w, {1, 1}, {1, 1}) + reshape(b, {out_channels, 1, 1}));
}

Network cnn_model(CnnShape s, int64_t seed) {
  return [s, seed](const Tensor& x) {
    const int64_t batch = x.dim(0);
    if (x.rank() != 2 || x.dim(1) != s.channels * s.height * s.width)
      KILN_THROW(ConfigError) << "[cnn] features of shape " << shape_str(x.shape()) << " do not hold "
                              << s.channels << "x" << s.height << "x" << s.width << " images";
    Tensor h = reshape(x, {batch, s.channels, s.height, s.width});
    h = max_pool2d(conv3x3_relu(h, s.conv1, "conv0", seed * 1000), {2, 2}, {2, 2});
    h = max_pool2d(conv3x3_relu(h, s.conv2, "conv1", seed * 1000 + 1), {2, 2}, {2, 2});
    h = reshape(h, {batch, -1});
    h = dense(h, s.dense, "dense0", seed * 1000 + 2, true);
    return dense(h, s.classes, "logits", seed * 1000 + 3, false);
  };
}

}  // namespace kiln
