// Which inputs of a dense node (op_list.h) are its bias and its addend: after a and b
// comes the bias unless bias=0, then the addend if addend=1. The node computes
// relu?((op(a) x op(b) + bias) + addend) in float32 and rounds once to its type.
#pragma once
#include "kiln/ir/graph.h"

namespace kiln {

struct DenseInputs {
  ValueId bias = -1, addend = -1;  // -1: absent
};

inline bool dense_has_bias(const Node& n) { return n.attrs.i_or("bias", 1) != 0; }
inline bool dense_has_addend(const Node& n) { return n.attrs.i_or("addend", 0) != 0; }

inline DenseInputs dense_inputs(const Node& n) {
  DenseInputs d;
  size_t next = 2;
  if (dense_has_bias(n) && n.inputs.size() > next) d.bias = n.inputs[next++];
  if (dense_has_addend(n) && n.inputs.size() > next) d.addend = n.inputs[next];
  return d;
}

}  // namespace kiln
