// loop_<op> for the index-mapping ops: each output element reads one input element, at
// an index computed from the output's coordinates (reshape keeps the linear index).
#include "backend/cpu/codegen/loop_ops.h"

namespace kiln::cpu {
namespace {

// The input element at the index summed over the output's axes of coordinate(axis, the
// output's coordinate on that axis) times the input stride of the input axis it is on:
// `coord(a, c)` gives that input axis and the input coordinate, which must lie in [0, the
// input's extent) (ExprEmitter::note_coordinates). `step(a)`, where given, is the input
// stride the term multiplies the coordinate by (after adding a multiple of the row width,
// if any): in a row loop, an index whose only column term is j itself, every other term a
// multiple of the row width, is R + j, and the ops that read through it (a slice after a
// transpose, say) see contiguous rows too (ExprEmitter::declare_aligned_index). A
// coordinate is exactly "j" only on a last axis as wide as the row, so every other axis's
// stride is a multiple of the row width and its coordinate a function of the row alone.
template <class Coord, class Step>
std::string gathered(LoopOp& op, Coord coord, Step step) {
  const Shape& os = op.n.shape;
  const Shape& is = op.input(0).shape;
  if (numel(is) == 0) return "static_cast<" + op.value_type() + ">(0)";  // padding of nothing
  const auto ost = strides_of(os), ist = strides_of(is);
  const int64_t w = op.em.row_width();
  std::string e = "0", row = "0";
  std::vector<std::string> at(is.size(), "0");
  bool aligned = w > 0, has_j = false;
  for (size_t a = 0; a < os.size(); ++a) {
    const std::string c = op.em.coordinate(op.idx, ost[a], os[a], numel(os), false);
    auto [axis, k] = coord(a, c);
    if (k.size() > 32) k = op.em.declare_index(k);  // named once: readers of the index reuse it
    at[axis] = k;
    const std::string t = k + " * " + std::to_string(ist[axis]);
    e += " + " + t;
    const int64_t m = step(a);
    if (c == "j" && m == 1 && !has_j) {
      has_j = true;
      row += " + " + coord(a, "0").second + " * " + std::to_string(ist[axis]);  // a slice's offset on the last axis
    } else if (w > 0 && m > 0 && m % w == 0) {
      row += " + " + t;
    } else {
      aligned = false;
    }
  }
  const std::string index = aligned && has_j ? op.em.declare_aligned_index(row) : op.em.declare_index(e);
  op.em.note_coordinates(index, is, std::move(at));
  return op.in_at(0, index);
}

}  // namespace

std::string loop_reshape(LoopOp& op) { return op.in_at(0, op.idx); }

std::string loop_transpose(LoopOp& op) {
  const auto ist = strides_of(op.input(0).shape);
  const auto& perm = op.n.attrs.ints("perm");
  return gathered(op, [&](size_t a, const std::string& c) { return std::make_pair(size_t(perm[a]), c); },
                  [&](size_t a) { return ist[perm[a]]; });
}

std::string loop_slice(LoopOp& op) {
  const auto ist = strides_of(op.input(0).shape);
  const auto& begin = op.n.attrs.ints("begin");
  return gathered(op, [&](size_t a, const std::string& c) {
    return std::make_pair(a, begin[a] == 0 ? c : "(" + c + " + " + std::to_string(begin[a]) + ")");
  }, [&](size_t a) {  // the offset must keep the row's alignment too
    const int64_t w = op.em.row_width();
    return w > 0 && begin[a] * ist[a] % w == 0 ? ist[a] : int64_t{0};
  });
}

// Reads a clamped (always valid) element, then zeroes it outside the input.
std::string loop_pad(LoopOp& op) {
  const Shape is = op.input(0).shape;
  const std::string zero = "static_cast<" + op.value_type() + ">(0)";
  if (numel(is) == 0) return zero;
  const auto& low = op.n.attrs.ints("low");
  std::string inside = "true";
  const std::string v = gathered(op, [&](size_t a, const std::string& c) {
    if (c == "j") {  // the row loop's column: cut the row at the pad's edges
      op.em.note_row_break(low[a]);
      op.em.note_row_break(low[a] + is[a]);
    }
    const std::string k = "(" + c + " - " + std::to_string(low[a]) + ")";
    inside += " && " + k + " >= 0 && " + k + " < " + std::to_string(is[a]);
    return std::make_pair(a, "km::min<int64_t>(km::max<int64_t>(" + k + ", 0), " + std::to_string(is[a] - 1) + ")");
  }, [](size_t) { return int64_t{0}; });  // clamped: never R + j
  return "((" + inside + ") ? " + v + " : " + zero + ")";
}

std::string loop_one_hot(LoopOp& op) {
  const int64_t depth = op.n.attrs.i("depth");
  const std::string k = op.in_at(0, "(" + op.idx + " / " + std::to_string(depth) + ")");
  const std::string hit = "(" + k + " == (" + op.idx + " % " + std::to_string(depth) + "))";
  return op.is_float() ? "(" + hit + " ? 1.0f : 0.0f)" : "static_cast<" + op.value_type() + ">(" + hit + ")";
}

// Element (i, j) of the output is element j of row indices[i] of params; an index out of
// range reads a clamped row (never out of bounds) and yields zero. i and j are the
// coordinates of the loop's index (in a row loop as wide as a row: r and j, so that the
// index, its range test and the row's offset are computed once per row, before the inner
// loop, and the row's elements are contiguous loads: with the test inside, a loop that
// also calls exp did not vectorize).
std::string loop_gather(LoopOp& op) {
  const Shape& ps = op.input(0).shape;
  const std::string zero = "static_cast<" + op.value_type() + ">(0)";
  if (numel(ps) == 0) return zero;
  const int64_t rows = ps[0], d = numel(ps) / rows, count = numel(op.n.shape);
  const std::string D = std::to_string(d), last = std::to_string(rows - 1);
  const std::string i = op.em.coordinate(op.idx, d, count / d, count, true);
  const std::string j = op.em.coordinate(op.idx, 1, d, count, false);
  const std::string k = "static_cast<int64_t>(" + op.in_at(1, i) + ")";
  std::string hit = "(" + k + " >= 0 && " + k + " <= " + last + ")";
  std::string base = "km::min<int64_t>(km::max<int64_t>(" + k + ", 0), " + last + ") * " + D;
  if (i == "r" && op.em.row_width() > 0) {
    hit = op.em.declare_row_local("bool", hit);
    base = op.em.declare_row_local("int64_t", base);
  }
  const std::string v = op.in_at(0, "(" + base + " + " + j + ")");
  return "(" + hit + " ? " + v + " : " + zero + ")";
}

}  // namespace kiln::cpu
