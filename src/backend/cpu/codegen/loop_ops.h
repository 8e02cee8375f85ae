// The per-element C++ of every op a fused loop computes (the ops the table marks
// fusible), found by name: loop_<op>, in loop_elementwise.cpp and loop_layout.cpp.
// An emitter returns a C++ expression for the op's value at the loop's element; it may
// first emit statements (index computations, input values) through the ExprEmitter.
#pragma once
#include <string>

#include "backend/cpu/codegen/expr.h"

namespace kiln::cpu {

// What an emitter sees: the node, the element's linear index (an expression in the
// node's shape) and the emitter of the surrounding loop.
struct LoopOp {
  ExprEmitter& em;
  const Node& n;
  const std::string& idx;

  const Node& input(size_t k) const { return em.graph().node(n.inputs[k]); }
  // Input k's value at this element (broadcast to the node's shape).
  std::string in(size_t k) { return em.value(n.inputs[k], em.broadcast_index(idx, n.shape, input(k).shape)); }
  // Input k's value at an index expression in its own shape.
  std::string in_at(size_t k, const std::string& index) { return em.value(n.inputs[k], index); }
  bool is_float() const { return kiln::is_float(n.dtype); }
  // e (a float expression) rounded to the node's type when that is bfloat16 or float16.
  std::string rounded(const std::string& e) const;
  std::string value_type() const { return ExprEmitter::value_type(n.dtype); }
};

#define KILN_X(name, arity, family, diff, fusible, ...) KILN_OP_CHOOSE(fusible, std::string loop_##name(LoopOp& op);, )
KILN_OPS(KILN_X)
#undef KILN_X

}  // namespace kiln::cpu
