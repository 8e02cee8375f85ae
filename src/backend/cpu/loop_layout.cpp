// loop_<op> for the index-mapping ops: each output element reads one input element, at
// an index computed from the output's coordinates (reshape keeps the linear index).
#include "backend/cpu/loop_ops.h"

namespace kiln::cpu {
namespace {

// The input element at the index summed over the output's axes of term(axis, the
// output's coordinate on that axis).
template <class Term>
std::string gathered(LoopOp& op, Term term) {
  const Shape& os = op.n.shape;
  if (numel(op.input(0).shape) == 0) return "static_cast<" + op.value_type() + ">(0)";  // padding of nothing
  const auto ost = strides_of(os);
  std::string e = "0";
  for (size_t a = 0; a < os.size(); ++a) e += " + " + term(a, op.em.coordinate(op.idx, ost[a], os[a], numel(os), false));
  return op.in_at(0, op.em.declare_index(e));
}

}  // namespace

std::string loop_reshape(LoopOp& op) { return op.in_at(0, op.idx); }

std::string loop_transpose(LoopOp& op) {
  const auto ist = strides_of(op.input(0).shape);
  const auto& perm = op.n.attrs.ints("perm");
  return gathered(op, [&](size_t a, const std::string& c) { return c + " * " + std::to_string(ist[perm[a]]); });
}

std::string loop_slice(LoopOp& op) {
  const auto ist = strides_of(op.input(0).shape);
  const auto& begin = op.n.attrs.ints("begin");
  return gathered(op, [&](size_t a, const std::string& c) {
    return "(" + c + " + " + std::to_string(begin[a]) + ") * " + std::to_string(ist[a]);
  });
}

// Reads a clamped (always valid) element, then zeroes it outside the input.
std::string loop_pad(LoopOp& op) {
  const Shape is = op.input(0).shape;
  const std::string zero = "static_cast<" + op.value_type() + ">(0)";
  if (numel(is) == 0) return zero;
  const auto ist = strides_of(is);
  const auto& low = op.n.attrs.ints("low");
  std::string inside = "true";
  const std::string v = gathered(op, [&](size_t a, const std::string& c) {
    const std::string k = "(" + c + " - " + std::to_string(low[a]) + ")";
    inside += " && " + k + " >= 0 && " + k + " < " + std::to_string(is[a]);
    return "km::min<int64_t>(km::max<int64_t>(" + k + ", 0), " + std::to_string(is[a] - 1) + ") * " +
           std::to_string(ist[a]);
  });
  return "((" + inside + ") ? " + v + " : " + zero + ")";
}

std::string loop_one_hot(LoopOp& op) {
  const int64_t depth = op.n.attrs.i("depth");
  const std::string k = op.in_at(0, "(" + op.idx + " / " + std::to_string(depth) + ")");
  const std::string hit = "(" + k + " == (" + op.idx + " % " + std::to_string(depth) + "))";
  return op.is_float() ? "(" + hit + " ? 1.0f : 0.0f)" : "static_cast<" + op.value_type() + ">(" + hit + ")";
}

// Element (i, j) of the output is element j of row indices[i] of params; an index out of
// range reads a clamped row (never out of bounds) and yields zero.
std::string loop_gather(LoopOp& op) {
  const Shape& ps = op.input(0).shape;
  const std::string zero = "static_cast<" + op.value_type() + ">(0)";
  if (numel(ps) == 0) return zero;
  const int64_t rows = ps[0], d = numel(ps) / rows;
  const std::string D = std::to_string(d), last = std::to_string(rows - 1);
  const std::string k = "static_cast<int64_t>(" + op.in_at(1, "(" + op.idx + " / " + D + ")") + ")";
  const std::string row = "km::min<int64_t>(km::max<int64_t>(" + k + ", 0), " + last + ")";
  const std::string v = op.in_at(0, "(" + row + " * " + D + " + " + op.idx + " % " + D + ")");
  return "((" + k + " >= 0 && " + k + " <= " + last + ") ? " + v + " : " + zero + ")";
}

}  // namespace kiln::cpu
