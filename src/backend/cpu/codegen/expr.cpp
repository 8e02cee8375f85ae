#include "backend/cpu/codegen/expr.h"

#include <algorithm>
#include <array>

#include "backend/cpu/codegen/loop_ops.h"
#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

using LoopEmitter = std::string (*)(LoopOp&);
constexpr std::array<LoopEmitter, kNumOps> kLoopEmitters = {
#define KILN_X(name, arity, family, diff, fusible, ...) KILN_OP_CHOOSE(fusible, &loop_##name, nullptr),
    KILN_OPS(KILN_X)
#undef KILN_X
};

// The C++ expression of node n at index idx, by its op's emitter.
std::string compute(ExprEmitter& em, const Node& n, const std::string& idx) {
  const LoopEmitter emit = kLoopEmitters[static_cast<size_t>(n.op)];
  KILN_CHECK(emit) << "op " << op_name(n.op) << " cannot be computed inside a fused loop";
  LoopOp op{em, n, idx};
  return emit(op);
}

}  // namespace

// Coordinate (idx / stride) % size of a linear index below `count`; no modulo when
// `outermost`. Below 2^32 the division is unsigned 32-bit: GCC vectorises that one (by
// multiplying), and not 64-bit division, which left broadcast loops such as a bias add
// scalar.
std::string coordinate(const std::string& idx, int64_t stride, int64_t size, int64_t count, bool outermost) {
  if (count > int64_t{0xffffffff}) {
    const std::string q = "(" + idx + " / " + std::to_string(stride) + ")";
    return outermost ? q : "(" + q + " % " + std::to_string(size) + ")";
  }
  std::string e = "static_cast<uint32_t>(" + idx + ")";
  if (stride != 1) e = "(" + e + " / " + std::to_string(stride) + "u)";
  if (!outermost) e = "(" + e + " % " + std::to_string(size) + "u)";
  return "static_cast<int64_t>(" + e + ")";
}

std::string ExprEmitter::storage_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f16: case DType::bf16: return "uint16_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::boolean: return "uint8_t";
  }
  return "void";
}

std::string ExprEmitter::value_type(DType t) {
  if (is_float(t)) return "float";
  return t == DType::boolean ? "bool" : "int64_t";
}

std::string ExprEmitter::store(DType t, const std::string& v) {
  switch (t) {
    case DType::f32: return v;
    case DType::bf16: return "f2bf(" + v + ")";
    case DType::f16: return "f2hf(" + v + ")";
    case DType::i32: return "static_cast<int32_t>(" + v + ")";
    case DType::i64: return v;
    case DType::boolean: return "static_cast<uint8_t>(" + v + ")";
  }
  return v;
}

std::string ExprEmitter::load(DType t, const std::string& elem) {
  switch (t) {
    case DType::f32: return elem;
    case DType::bf16: return "bf2f(" + elem + ")";
    case DType::f16: return "hf2f(" + elem + ")";
    case DType::i32: case DType::i64: return "static_cast<int64_t>(" + elem + ")";
    case DType::boolean: return "(" + elem + " != 0)";
  }
  return elem;
}

std::string ExprEmitter::pointer_decl(DType t, const std::string& name, int buffer, bool is_const) {
  const std::string st = (is_const ? "const " : "") + storage_type(t);
  return "  " + st + "* __restrict " + name + " = static_cast<" + st + "*>(B[" + std::to_string(buffer) + "]);\n";
}

std::string ExprEmitter::pointer_decls() const { return decls_; }

std::string ExprEmitter::table16(const std::string& fn, DType t) {
  KILN_CHECK(t == DType::bf16 || t == DType::f16) << "table16 of " << dtype_name(t);
  const std::string widen = t == DType::bf16 ? "bf2f" : "hf2f";
  const std::string name = "tab_" + fn + "_" + widen;
  if (tables_.insert(name).second)
    decls_ += "  const float* __restrict " + name + " = table_" + fn + "_" + widen + "();\n";
  return name;
}

std::string ExprEmitter::table_lookup(const std::string& fn, DType t, const std::string& index) {
  lookups_.push_back({table16(fn, t), index});
  return "KILN_LOOKUP_" + std::to_string(lookups_.size() - 1) + "_";
}

std::string ExprEmitter::resolve_lookups(std::string text, size_t count, const std::function<std::string(size_t)>& as) {
  for (size_t k = 0; k < count; ++k) text = replace_all(std::move(text), "KILN_LOOKUP_" + std::to_string(k) + "_", as(k));
  return text;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string ExprEmitter::direct_lookups(const std::string& text) const {
  return resolve_lookups(text, lookups_.size(), [&](size_t k) { return lookups_[k].table + "[" + lookups_[k].index + "]"; });
}

std::string ExprEmitter::row_loops(int64_t width, const std::string& inner) const {
  std::vector<int64_t> cuts{0};
  cuts.insert(cuts.end(), row_breaks_.begin(), row_breaks_.end());
  cuts.push_back(width);
  std::ostringstream k;
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    k << "#pragma omp simd\n";
    k << "    for (int64_t j = " << cuts[c] << "; j < " << cuts[c + 1] << "; ++j) {\n";
    k << "      const int64_t i = r * " << width << " + j;\n";
    k << direct_lookups(inner) << "    }\n";
  }
  return k.str();
}

std::string ExprEmitter::coordinate(const std::string& idx, int64_t stride, int64_t size, int64_t count,
                                    bool outermost) const {
  ++coordinates_;
  const int64_t w = row_width_;
  if (w > 0 && idx != "i") {
    const auto a = aligned_.find(idx);
    if (a != aligned_.end()) {
      std::string c = aligned_coordinate(a->second, stride, size, outermost);
      if (!c.empty()) return c;
    }
  }
  if (const auto c = noted_.find(idx); c != noted_.end()) {
    // idx / strides[a] % shape[a] is at[a] (every coordinate lies within its extent). An
    // outermost request promises idx / stride < size, so no modulo was due either; and
    // idx < numel(shape), so idx / strides[0] is the first coordinate whatever the size.
    const Coordinates& k = c->second;
    for (size_t a = 0; a < k.shape.size(); ++a)
      if (k.strides[a] == stride && (k.shape[a] == size || (a == 0 && outermost))) return k.at[a];
  }
  if (w > 0 && idx == "i") {
    // i = r*w + j with 0 <= j < w.
    if (stride % w == 0) {
      // j never carries into i / stride: the coordinate is the row's alone.
      const std::string q = stride == w ? "r" : "(r / " + std::to_string(stride / w) + ")";
      return outermost ? q : "(" + q + " % " + std::to_string(size) + ")";
    }
    if (!outermost && stride * size < w && w % (stride * size) == 0) {
      // The coordinate cycles within a row: the same at j as at i.
      return "static_cast<int64_t>(static_cast<uint32_t>(" + j_over(stride) + ") % " + std::to_string(size) + "u)";
    }
    if (w % stride == 0 && (outermost || (stride * size) % w == 0)) {
      // i / stride = r*(w/stride) + j/stride, and the row's part is a multiple of w/stride,
      // which divides size: adding j/stride < w/stride never wraps around size.
      const int64_t per_row = w / stride;
      const std::string jpart = j_over(stride);
      if (!outermost && size == per_row) return jpart;
      const std::string rpart = per_row == 1 ? "r" : "r * " + std::to_string(per_row);
      return "(" + (outermost ? rpart : "(" + rpart + ") % " + std::to_string(size)) + " + " + jpart + ")";
    }
  }
  return kiln::cpu::coordinate(idx, stride, size, count, outermost);
}

// j / k in the row loop. For a few pieces (k >= w / 8) the row is cut at the multiples
// of k, so that within each piece j / k is a constant and the loads are contiguous.
std::string ExprEmitter::j_over(int64_t k) const {
  if (k == 1) return "j";
  if (row_width_ / k <= 8)
    for (int64_t c = k; c < row_width_; c += k) note_row_break(c);
  return "static_cast<int64_t>(static_cast<uint32_t>(j) / " + std::to_string(k) + "u)";
}

// The coordinate of an index R + j (R a multiple of the row width w, 0 <= j < w): as for
// i = r*w + j, a function of R alone where j cannot carry into it, else R's part plus j's;
// "" where neither holds (the caller divides the index itself).
std::string ExprEmitter::aligned_coordinate(const std::string& R, int64_t stride, int64_t size, bool outermost) const {
  const int64_t w = row_width_;
  const std::string s = std::to_string(stride), n = std::to_string(size);
  const std::string q = stride == 1 ? "(" + R + ")" : "((" + R + ") / " + s + ")";
  if (stride % w == 0) return outermost ? q : "(" + q + " % " + n + ")";
  if (!outermost && stride * size < w && w % (stride * size) == 0)
    return "static_cast<int64_t>(static_cast<uint32_t>(" + j_over(stride) + ") % " + n + "u)";
  if (w % stride == 0 && (outermost || (stride * size) % w == 0))
    return "(" + (outermost ? q : "(" + q + " % " + n + ")") + " + " + j_over(stride) + ")";
  return "";
}

std::string ExprEmitter::declare_aligned_index(const std::string& row_part) {
  const std::string name = declare_index(row_part + " + j");
  aligned_[name] = row_part;
  return name;
}

void ExprEmitter::note_coordinates(const std::string& idx, const Shape& shape, std::vector<std::string> at) {
  noted_[idx] = Coordinates{shape, strides_of(shape), std::move(at)};
}

std::string ExprEmitter::broadcast_index(const std::string& idx, const Shape& from, const Shape& to) {
  if (from == to) return idx;
  if (numel(to) == 1) return "0";
  const auto fst = strides_of(from), tst = strides_of(to);
  const size_t lead = from.size() - to.size();
  std::string e;
  std::vector<std::string> at(to.size(), "0");
  for (size_t a = 0; a < to.size(); ++a) {
    if (to[a] == 1) continue;
    const size_t j = a + lead;
    if (!e.empty()) e += " + ";
    at[a] = coordinate(idx, fst[j], from[j], numel(from), j == 0);
    e += at[a] + " * " + std::to_string(tst[a]);
  }
  const std::string name = declare_index(e.empty() ? "0" : e);
  note_coordinates(name, to, std::move(at));
  return name;
}

std::string ExprEmitter::declare_row_local(const std::string& type, const std::string& expr) {
  const std::string name = fresh("h");
  (row_width_ > 0 ? row_body_ : *body_) << "      const " << type << " " << name << " = " << expr << ";\n";
  return name;
}

std::string ExprEmitter::declare_index(const std::string& expr) {
  const std::string name = fresh("i");
  *body_ << "      const int64_t " << name << " = " << expr << ";\n";
  return name;
}

// Pointers are named by the order the kernel first reads their buffers (p0, p1, ...), not
// by buffer number: kernels that differ only in their buffers have the same text, and
// generate_source keeps one copy of it.
std::string ExprEmitter::load(ValueId v, const std::string& idx) {
  const int b = s_.buffer_of[v];
  const DType t = s_.graph.node(v).dtype;
  const auto found = std::find(declared_.begin(), declared_.end(), b);
  const std::string p = "p" + std::to_string(found - declared_.begin());  // the next slot when new
  if (found == declared_.end()) {
    declared_.push_back(b);
    decls_ += pointer_decl(t, p, b, true);
  }
  const std::string elem = p + "[" + idx + "]";
  // A small 16-bit buffer read at computed indices (a bias broadcast over a batch): x86
  // has no 16-bit gather, so such a load keeps the whole loop scalar. Widen it to float32
  // once, before the loop, and gather from that.
  const int64_t count = numel(s_.graph.node(v).shape);
  if ((t == DType::bf16 || t == DType::f16) && idx != "i" && count <= kWidenLimit) {
    const auto wat = std::find(widened_.begin(), widened_.end(), b);
    const int slot = static_cast<int>(wat - widened_.begin());  // the next slot when new
    const std::string w = "w" + std::to_string(slot);
    if (wat == widened_.end()) {
      widened_.push_back(b);
      decls_ += "  float " + w + "[" + std::to_string(count) + "];\n  for (int64_t k = 0; k < " + std::to_string(count) +
                "; ++k) " + w + "[k] = " + load(t, p + "[k]") + ";\n";
    }
    pending_raw_ = {t, "", slot, idx, p, count};
    return w + "[" + idx + "]";
  }
  if (t == DType::bf16 || t == DType::f16) {  // keep the bits too, for a store that moves them unchanged
    const std::string bits = fresh("u");  // "r" names loops
    *body_ << "      const uint16_t " << bits << " = " << elem << ";\n";
    pending_raw_ = {t, bits, -1, "", "", 0};
    return load(t, bits);
  }
  return load(t, elem);
}

std::string ExprEmitter::store_value(DType t, const std::string& v) {
  const auto found = raw_.find(v);
  if (found == raw_.end() || found->second.type != t) return store(t, v);
  const RawBits& raw = found->second;
  if (raw.widened < 0) return raw.local;
  // A widened buffer's bits, as 32-bit patterns (x86 gathers no 16-bit elements): made
  // once, beside its float copy, before the loop.
  const std::string wb = "wb" + std::to_string(raw.widened);
  if (std::find(widened_bits_.begin(), widened_bits_.end(), raw.widened) == widened_bits_.end()) {
    widened_bits_.push_back(raw.widened);
    const std::string count = std::to_string(raw.count);
    decls_ += "  uint32_t " + wb + "[" + count + "];\n  for (int64_t k = 0; k < " + count + "; ++k) " + wb + "[k] = " +
              raw.pointer + "[k];\n";
  }
  return "static_cast<uint16_t>(" + wb + "[" + raw.index + "])";
}

std::string ExprEmitter::value(ValueId v, const std::string& idx, bool root) {
  if (row_width_ > 0 && idx == "r" && !in_row_ && !root) return row_value(v);
  const auto key = std::make_pair(v, idx);
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  const Node& n = s_.graph.node(v);
  pending_raw_ = RawBits{};
  const bool loaded = !root && s_.has_buffer(v);
  std::string e = loaded ? load(v, idx) : compute(*this, n, idx);
  const std::string name = fresh("t");
  *body_ << "      const " << value_type(n.dtype) << " " << name << " = " << e << ";\n";
  if (loaded && pending_raw_.type != DType::f32)
    raw_[name] = pending_raw_;  // a load of a 16-bit element
  else if (const auto same = raw_.find(e); same != raw_.end())
    raw_[name] = same->second;  // an op that passes its operand's value on unchanged
  return known_[key] = name;
}

// Value v at the row index "r", emitted into row_body_. Besides doing the work once per
// row, this is what lets the inner loop vectorize: the compiler does not hoist a load it
// cannot prove unaliased (the pointers reach the OpenMP body through a struct), and a
// gather whose row comes from such a load has a base it calls "not affine".
std::string ExprEmitter::row_value(ValueId v) {
  std::ostringstream* inner = body_;
  body_ = &row_body_;
  in_row_ = true;
  std::swap(known_, row_known_);
  const std::string name = value(v, "r");
  std::swap(known_, row_known_);
  known_.insert(row_known_.begin(), row_known_.end());  // row locals are in the inner loop's scope
  in_row_ = false;
  body_ = inner;
  return name;
}

}  // namespace kiln::cpu
