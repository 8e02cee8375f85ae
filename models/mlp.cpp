#include "kiln/base/error.h"
#include "kiln/models/models.h"

namespace kiln {

Tensor dense(const Tensor& x, int64_t units, const std::string& name, int64_t seed, bool relu_after) {
  Graph& g = x.graph();
  const Tensor w = variable(g, name + "/kernel", x.dtype(), {x.dim(-1), units}, Init::he_uniform(seed));
  const Tensor b = variable(g, name + "/bias", x.dtype(), {units}, Init::zeros());
  const Tensor y = matmul(x, w) + b;
  return relu_after ? relu(y) : y;
}

Network mlp_model(std::vector<int64_t> hidden, int64_t classes, int64_t seed) {
  return [hidden, classes, seed](const Tensor& x) {
    Tensor h = x;
    for (size_t i = 0; i < hidden.size(); ++i)
      h = dense(h, hidden[i], "dense" + std::to_string(i), seed * 1000 + static_cast<int64_t>(i), true);
    return dense(h, classes, "logits", seed * 1000 + static_cast<int64_t>(hidden.size()), false);
  };
}

std::vector<std::string> model_names() { return {"mlp", "cnn"}; }

int64_t model_input_size(const std::string& name) {
  make_model(name, 0);  // ConfigError for an unknown name
  const CnnShape cnn;
  return cnn.channels * cnn.height * cnn.width;
}

OptimizerSettings default_optimizer(const std::string& name) {
  if (name == kGptModelName) return gpt_optimizer();
  make_model(name, 0);  // ConfigError for an unknown name
  return OptimizerSettings{};
}

Network make_model(const std::string& name, int64_t seed) {
  if (name == "mlp") return mlp_model({1024, 1024}, 10, seed);
  if (name == "cnn") return cnn_model(CnnShape{}, seed);
  KILN_THROW(ConfigError) << "[model] unknown model '" << name << "'; valid: mlp, cnn";
}

}  // namespace kiln
