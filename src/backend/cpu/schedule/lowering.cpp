#include "backend/cpu/schedule/lowering.h"

#include <array>

namespace kiln::cpu {
namespace {

// The one place that maps op families to CPU kernels. A fusible op is always a loop op;
// a switch with no default makes a new family a compiler warning here.
constexpr Lowering lowering_by(OpFamily family, bool fusible) {
  if (fusible) return Lowering::loop;
  switch (family) {
    case OpFamily::Source: return Lowering::storage;  // placeholder, variable (constant is fusible)
    case OpFamily::Reduce: return Lowering::reduce;
    case OpFamily::Pool2D:
    case OpFamily::Pool2DGrad:
    case OpFamily::AvgPool2DGrad: return Lowering::pool;
    case OpFamily::MatMul:
    case OpFamily::Dense:
    case OpFamily::Conv2D:
    case OpFamily::Conv2DBias:
    case OpFamily::Conv2DBackwardInput:
    case OpFamily::Conv2DBackwardFilter: return Lowering::library;
    case OpFamily::Assign: return Lowering::update;
    case OpFamily::ScatterAdd: return Lowering::scatter;
    // The runtime's MPI call on the step's buffer (src/backend/interp/all_reduce.cpp).
    case OpFamily::Collective: return Lowering::fallback;
    case OpFamily::Concat:
    case OpFamily::ArgMax:
    // Families whose ops are fusible; an entry marked otherwise runs the interpreter's kernel.
    case OpFamily::Cast:
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Compare:
    case OpFamily::Select:
    case OpFamily::Reshape:
    case OpFamily::Transpose:
    case OpFamily::BroadcastTo:
    case OpFamily::Slice:
    case OpFamily::Pad:
    case OpFamily::OneHot:
    case OpFamily::Random:
    case OpFamily::Gather: return Lowering::fallback;
  }
  return Lowering::fallback;
}

constexpr bool gathers(OpFamily family) {
  return family == OpFamily::Transpose || family == OpFamily::Slice || family == OpFamily::Pad ||
         family == OpFamily::OneHot || family == OpFamily::Gather;
}

constexpr std::array<Lowering, kNumOps> kLowering = {
#define KILN_X(name, arity, family, diff, fusible, ...) lowering_by(OpFamily::family, fusible),
    KILN_OPS(KILN_X)
#undef KILN_X
};

constexpr std::array<bool, kNumOps> kKeepsIndex = {
#define KILN_X(name, arity, family, diff, fusible, ...) fusible && !gathers(OpFamily::family),
    KILN_OPS(KILN_X)
#undef KILN_X
};

}  // namespace

Lowering lowering_of(Op op) { return kLowering[static_cast<size_t>(op)]; }

bool keeps_index(Op op) { return kKeepsIndex[static_cast<size_t>(op)]; }

std::optional<ConvRoles> conv_roles(const Graph& g, ValueId id) {
  const Node& n = g.node(id);
  switch (op_info(n.op).family) {
    case OpFamily::Conv2D:
    case OpFamily::Conv2DBias: return ConvRoles{onednn::ConvPass::forward, n.inputs[0], id};
    case OpFamily::Conv2DBackwardInput: return ConvRoles{onednn::ConvPass::backward_input, id, n.inputs[0]};
    case OpFamily::Conv2DBackwardFilter: return ConvRoles{onednn::ConvPass::backward_filter, n.inputs[0], n.inputs[1]};
    default: return std::nullopt;
  }
}

}  // namespace kiln::cpu
