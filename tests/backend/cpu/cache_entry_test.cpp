// The CPU compile-cache key: every ingredient matters, nothing else does.
#include "backend/cpu/build/cache_entry.h"

#include <gtest/gtest.h>

#include "backend/cpu/run/abi.h"
#include "kiln/backend/cpu_features.h"
#include "kiln/ir/ops.h"
#include "kiln/ir/text.h"

namespace kiln::cpu {
using cache::hash_hex;
using cache::KeyIngredients;
namespace {

std::string mlp_text(int64_t width, const std::string& hidden_name) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {4, 8});
  const Tensor w1 = variable(g, "w1", DType::f32, {8, width}, Init::constant(0.1));
  const Tensor w2 = variable(g, "w2", DType::f32, {width, 2}, Init::constant(0.1));
  const Tensor h = relu(matmul(x, w1));
  g.set_name(h.id(), hidden_name);
  g.add_output("y", matmul(h, w2).id());
  return print_graph(g, TextForm::canonical);
}

KeyIngredients ingredients(const std::string& text, PrecisionPolicy policy, std::string_view source) {
  return cache_key_ingredients(text, policy, source, host_toolchain());
}

TEST(CpuCacheKey, IsXxh3OfAllIngredientsAnd32HexDigits) {
  const KeyIngredients k = ingredients(mlp_text(16, "h"), PrecisionPolicy::original, "code");
  const std::string key = k.key();
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(k.get("abi_version"), std::to_string(kAbiVersion));
  EXPECT_EQ(k.get("kiln_version"), KILN_VERSION);
  EXPECT_EQ(k.get("compiler"), host_toolchain().cxx);
  EXPECT_EQ(k.get("compiler_identity"), host_toolchain().identity);
  EXPECT_NE(k.get("compiler_flags").find("-march=native"), std::string::npos);
  EXPECT_EQ(k.get("cpu_isa"), cpu_features().isa());
  EXPECT_EQ(k.get("cpu_model"), cpu_features().model);
  EXPECT_EQ(k.get("precision_policy"), "original");
  EXPECT_EQ(k.get("source"), hash_hex("code"));
  EXPECT_EQ(k.to_json()["graph"], hash_hex(mlp_text(16, "h")));
}

TEST(CpuCacheKey, NoiseDoesNotChangeIt) {
  // Same inputs, computed twice (other times, other temp dirs, other allocations).
  EXPECT_EQ(ingredients(mlp_text(16, "h"), PrecisionPolicy::original, "code").key(),
            ingredients(mlp_text(16, "h"), PrecisionPolicy::original, "code").key());
  // A renamed intermediate value is the same canonical graph.
  EXPECT_EQ(ingredients(mlp_text(16, "h"), PrecisionPolicy::original, "code").key(),
            ingredients(mlp_text(16, "hidden_renamed"), PrecisionPolicy::original, "code").key());
}

TEST(CpuCacheKey, EveryIngredientChangesIt) {
  const KeyIngredients base = ingredients(mlp_text(16, "h"), PrecisionPolicy::original, "code");
  EXPECT_NE(base.key(), ingredients(mlp_text(32, "h"), PrecisionPolicy::original, "code").key()) << "graph";
  EXPECT_NE(base.key(), ingredients(mlp_text(16, "h"), PrecisionPolicy::mixed_bfloat16, "code").key()) << "policy";
  // Another kiln build generating other code for the same graph (a changed schedule or
  // code generator under the same version number) never shares an entry.
  EXPECT_NE(base.key(), ingredients(mlp_text(16, "h"), PrecisionPolicy::original, "code2").key()) << "source";
  for (size_t i = 0; i < base.items.size(); ++i) {
    KeyIngredients changed = base;
    changed.items[i].second += "x";
    EXPECT_NE(base.key(), changed.key()) << base.items[i].first;
  }
}

}  // namespace
}  // namespace kiln::cpu
