// Emits the per-element C++ statements that compute one value of a fused group. The
// code of each op is its loop_<op> emitter (loop_ops.h); this class walks the fused
// expression, loads values that have buffers and names every intermediate once.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

class ExprEmitter {
 public:
  ExprEmitter(const Schedule& s, std::ostringstream& body) : s_(s), body_(&body) {}

  const Graph& graph() const { return s_.graph; }

  // The name of a C++ local holding value v at linear index `idx` (an expression in v's
  // shape). `root` computes v itself even if it has a buffer (it is the group's output).
  // In a row loop, a value at the row's own index "r" (a gather's index) is computed once
  // per row, in row_statements(), before the inner loop.
  std::string value(ValueId v, const std::string& idx, bool root = false);
  // The statements a row loop runs before its inner loops (values at index "r").
  std::string row_statements() const { return row_body_.str(); }

  // The index in shape `to` that broadcasting reads for index `idx` of shape `from`
  // (a new local when it takes arithmetic).
  std::string broadcast_index(const std::string& idx, const Shape& from, const Shape& to);

  // Coordinate (idx / stride) % size of a linear index below `count` (no modulo when
  // `outermost`). In a row loop (split_rows) a coordinate of the loop's own index "i" is
  // written in r and j where it can be: a function of the row alone (hoisted out of the
  // inner loop) or the row's part plus a function of j, so that the loads it indexes are
  // contiguous vector loads instead of gathers.
  std::string coordinate(const std::string& idx, int64_t stride, int64_t size, int64_t count, bool outermost) const;

  // The loop runs as rows of `width` elements: i = r * width + j, j in [0, width).
  void split_rows(int64_t width) { row_width_ = width; }
  // Whether the emitted code computed any coordinate (so a row loop may pay off).
  bool computed_coordinates() const { return coordinates_ > 0; }
  // A column of the row where some read changes behaviour (a pad's edge on the last
  // axis): the row loop is cut there, so that within each piece the pad's bounds test is
  // a constant the compiler folds away, with its clamped index.
  void note_row_break(int64_t j) const {
    if (j > 0 && j < row_width_) row_breaks_.insert(j);
  }
  const std::set<int64_t>& row_breaks() const { return row_breaks_; }
  // The inner loops of a row loop over j (i = r * width + j), one per piece of the row
  // between row breaks (none unless split_rows), each running `inner` (the body with its
  // stores, lookups read directly): with constant bounds on j, the compiler folds each
  // pad's test and clamp.
  std::string row_loops(int64_t width, const std::string& inner) const;

  // Declares a local `const int64_t` holding `expr`; returns its name.
  std::string declare_index(const std::string& expr);
  // Declares a local `const <type>` holding `expr`, a function of the row alone: in a row
  // loop once per row (row_statements()), else in the loop body. Returns its name.
  std::string declare_row_local(const std::string& type, const std::string& expr);
  // In a row loop: declares the index row_part + j, where row_part (free of j) is a
  // multiple of the row width; coordinates of it are then written as for i itself.
  std::string declare_aligned_index(const std::string& row_part);
  int64_t row_width() const { return row_width_; }
  // Records that the local `idx` indexes a tensor of `shape` at these coordinates (one
  // expression per axis, each within [0, shape[a])): coordinate() of idx at that axis's
  // stride and extent returns it instead of dividing idx again, so a chain of pads,
  // slices and transposes (a depthwise convolution's gradient) costs no division per link.
  void note_coordinates(const std::string& idx, const Shape& shape, std::vector<std::string> at);

  // Pointer declarations for the buffers the emitted code reads ("p<buffer>"), and the
  // tables the code reads (table16).
  std::string pointer_decls() const;
  // The table of kiln_math::<fn>_f32 at every value of t (bfloat16 or float16; the
  // prelude's Table16, made before the parallel loop) at `index`, as a marker in the
  // emitted text, resolved by resolve_lookups: a flat loop gathers a block of lookups with
  // 32-bit indices first (GCC 12 emulates a gather whose index is 16-bit with scalar
  // loads, 2x slower), other loops read directly.
  std::string table_lookup(const std::string& fn, DType t, const std::string& index);
  struct Lookup {
    std::string table, index;
  };
  const std::vector<Lookup>& lookups() const { return lookups_; }
  // `text` with lookup k's marker replaced by `as(k)`; direct_lookups: table[index].
  static std::string resolve_lookups(std::string text, size_t count, const std::function<std::string(size_t)>& as);
  std::string direct_lookups(const std::string& text) const;

  static std::string storage_type(DType t);  // element type of a buffer
  static std::string value_type(DType t);    // C++ type values are computed in
  static std::string store(DType t, const std::string& v);  // value -> storage element
  // store(t, v), or the element v was loaded from when v is a 16-bit element moved
  // unchanged (a reshape, transpose or slice of a bfloat16 tensor): a copy of its bits
  // instead of a widening and a rounding per element, as the interpreter copies them.
  std::string store_value(DType t, const std::string& v);
  static std::string load(DType t, const std::string& elem);  // storage element -> value
  // "  [const ]T* __restrict <name> = static_cast<...>(B[<buffer>]);"
  static std::string pointer_decl(DType t, const std::string& name, int buffer, bool is_const);

 private:
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }
  // The local pointing at a table, declared with the pointers once per kernel.
  std::string table16(const std::string& fn, DType t);
  std::string j_over(int64_t k) const;
  std::string aligned_coordinate(const std::string& R, int64_t stride, int64_t size, bool outermost) const;
  std::string load(ValueId v, const std::string& idx);

  const Schedule& s_;
  std::string row_value(ValueId v);
  std::ostringstream* body_;  // the inner loop's statements, or row_body_ while emitting those
  std::ostringstream row_body_;
  bool in_row_ = false;
  int counter_ = 0;
  int64_t row_width_ = 0;  // 0: one flat loop over i
  mutable int coordinates_ = 0;
  mutable std::set<int64_t> row_breaks_;
  std::map<std::string, std::string> aligned_;  // index local -> its row part R (index = R + j)
  struct Coordinates {
    Shape shape;
    std::vector<int64_t> strides;
    std::vector<std::string> at;
  };
  std::map<std::string, Coordinates> noted_;  // index local -> its coordinates (note_coordinates)
  std::string decls_;
  std::set<std::string> tables_;  // the table locals declared in decls_
  std::vector<Lookup> lookups_;   // table_lookup's, by marker number
  std::vector<int> declared_;
  std::vector<int> widened_;  // 16-bit buffers copied to float32 arrays before the loop
  static constexpr int64_t kWidenLimit = 4096;  // elements (16 KiB on the stack)
  // Values already computed in this loop body, by (value, index expression); row_known_:
  // those of row_body_ alone (the inner loop's locals are out of its scope).
  std::map<std::pair<ValueId, std::string>, std::string> known_, row_known_;
  // Values that are a 16-bit buffer's element unchanged: name -> where its bits are (the
  // local holding them, or a widened buffer's slot and the index); pending_raw_ is the
  // last load's, for value() to name.
  struct RawBits {
    DType type = DType::f32;
    std::string local;     // set: the element's bits are this local
    int widened = -1;      // else: slot in widened_ of the buffer read at `index`
    std::string index;
    std::string pointer{};  // that buffer's pointer and element count
    int64_t count = 0;
  };
  std::map<std::string, RawBits> raw_;
  RawBits pending_raw_;
  std::vector<int> widened_bits_;  // widened_ slots also copied as 32-bit bit patterns
};

// Work below this many elements runs on one thread: forking costs more than it saves.
inline constexpr int64_t kParallelThreshold = 16384;

// "  T* __restrict <name> = ...;": a pointer to v's buffer, for writing.
inline std::string out_decl(const Schedule& s, ValueId v, const std::string& name = "out") {
  return ExprEmitter::pointer_decl(s.graph.node(v).dtype, name, s.buffer_of[v], false);
}

// Coordinate (idx / stride) % size of a linear index below `count`; no modulo when
// `outermost`.
std::string coordinate(const std::string& idx, int64_t stride, int64_t size, int64_t count, bool outermost);

// `text` with every `from` replaced by `to` (left to right; a replacement is not searched again).
std::string replace_all(std::string text, const std::string& from, const std::string& to);

}  // namespace kiln::cpu
