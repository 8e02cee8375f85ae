// Running graphs: feeds in, outputs out, variables kept between steps.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "kiln/ir/array.h"
#include "kiln/ir/graph.h"

namespace kiln {

using Feeds = std::map<std::string, Array>;    // placeholder name -> value
using Fetches = std::map<std::string, Array>;  // output name -> value
using Variables = std::map<std::string, Array>;  // variable name -> value (the training state)

// Gives every variable of `g` that `vars` lacks its initial value, from the variable's
// initialiser and seed. Deterministic on every machine. Existing values are checked
// against the graph's dtype and shape (GraphError naming the variable on mismatch).
void initialize_variables(const Graph& g, Variables& vars);

// Something that runs one step of a graph.
class Executable {
 public:
  virtual ~Executable() = default;
  // Runs one step: reads feeds and variables, returns the graph's outputs, and applies
  // the graph's assigns to `vars` after everything else was computed. Missing or
  // mistyped feeds and variables are GraphErrors naming the value.
  virtual Fetches run(const Feeds& feeds, Variables& vars) = 0;
};

// The reference interpreter: simple kernels that serve as the oracle for compiled code.
std::unique_ptr<Executable> make_interpreter(const Graph& g);

}  // namespace kiln
