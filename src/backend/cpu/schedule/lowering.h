// How the CPU backend computes each op. Nothing here lists ops by name: the answer
// follows from the op table (op_list.h), from an op's `fusible` column and its family.
#pragma once
#include <cstdint>
#include <optional>

#include "backend/onednn/onednn.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/op.h"

namespace kiln::cpu {

enum class Lowering : uint8_t {
  storage,   // placeholder, variable: a buffer the caller provides; no code
  loop,      // computed element by element inside the fused loops that read it (loop_<op>)
  reduce,    // a reduction kernel whose input expression is fused into it
  pool,      // a generated loop nest over NCHW planes (codegen/pool.cpp)
  library,   // a oneDNN call through the Runtime: matmul, convolution
  scatter,   // scatter_add: a generated loop over float32 rows (codegen/scatter.cpp); other
             // dtypes run the interpreter's kernel
  fallback,  // the interpreter's kernel, called from the compiled step
  update,    // assign: no code; the new value is written in place or copied after the step
};

Lowering lowering_of(Op op);

// A loop op whose output element reads each input at the same linear index, up to
// broadcasting (elementwise ops, casts, constants, reshape); not the gathers (transpose,
// slice, pad, one_hot), which read at an index computed from the output's coordinates.
bool keeps_index(Op op);

// A convolution node's oneDNN pass and its activations: x (the input, or backward_input's
// result) and y (the output, or the backward passes' dy). nullopt for other ops.
struct ConvRoles {
  onednn::ConvPass pass;
  ValueId x, y;
};
std::optional<ConvRoles> conv_roles(const Graph& g, ValueId id);

}  // namespace kiln::cpu
