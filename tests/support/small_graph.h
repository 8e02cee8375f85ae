// A tiny compilable graph with a known result, for compiler and cache tests.
#pragma once
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kiln/ir/ops.h"
#include "kiln/backend/runtime.h"
#include "support/test_arrays.h"

namespace kiln::testkit {

// y = relu(2 * x w), x [2, width], w = 0.5 everywhere; `hidden` names 2 * x w.
inline kiln::Graph small_graph(int64_t width = 3, const std::string& hidden = "") {
  using namespace kiln;
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, width});
  const Tensor w = variable(g, "w", DType::f32, {width, 2}, Init::constant(0.5));
  const Tensor h = matmul(x, w) * 2.0;
  if (!hidden.empty()) g.set_name(h.id(), hidden);
  g.add_output("y", relu(h).id());
  return g;
}

// For small_graph() (width 3): the row sums of x, clipped at 0.
inline void expect_small_graph_result(kiln::Executable& exe) {
  kiln::Variables vars;
  kiln::initialize_variables(small_graph(), vars);
  const kiln::Fetches out = exe.run({{"x", f32({2, 3}, {1, 2, 3, -4, -5, -6})}}, vars);
  EXPECT_EQ(out.at("y").to_floats(), (std::vector<float>{6, 6, 0, 0}));
}

}  // namespace kiln::testkit
