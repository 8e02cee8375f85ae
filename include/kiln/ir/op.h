// Op identities and their table entries (see op_list.h).
#pragma once
#include <cstdint>
#include <string_view>

#include "kiln/ir/op_list.h"

namespace kiln {

enum class Op : uint8_t {
#define KILN_X(name, ...) name,
  KILN_OPS(KILN_X)
#undef KILN_X
};

enum class OpFamily : uint8_t {
  Source, Cast, Unary, Binary, Compare, Select, Reduce, Reshape, Transpose, BroadcastTo,
  Slice, Pad, Concat, MatMul, Dense, Conv2D, Conv2DBias, Conv2DBackwardInput, Conv2DBackwardFilter, Pool2D,
  Pool2DGrad, AvgPool2DGrad, OneHot, Gather, ScatterAdd, ArgMax, Assign,
  Collective, Random
};


// How an op behaves under a mixed-precision policy.
enum class OpPrecision : uint8_t { Low, Follow, Keep, None };

struct OpInfo {
  std::string_view name;
  int arity;  // -1: variadic, at least one
  OpFamily family;
  bool differentiable;
  bool fusible;  // a fused loop computes it element by element (op_list.h)
  OpPrecision precision;
  std::string_view attributes;  // e.g. "transpose_a transpose_b"; '?' = optional
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).name; }
// Inverse of op_name; false if there is no such op.
bool find_op(std::string_view name, Op* out);
inline constexpr int kNumOps = KILN_OP_COUNT;

}  // namespace kiln
