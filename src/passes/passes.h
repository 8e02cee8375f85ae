// Graph-to-graph passes, one per file, run in order by lower() (pipeline.cpp).
// Each takes a verified graph and returns a new verified graph with the same outputs,
// the same assigns and the same names on placeholders, variables and outputs.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/precision_policy.h"

namespace kiln::passes {

// Removes nodes that neither an output nor an assign needs.
Graph dce(const Graph& g);

// The graph of a step that changes no state: every assign is gone, with whatever only the
// assigns needed (gradients, optimizer updates, the global step's increment). A value
// that reads an assign reads the value it would have written. Placeholders stay. The
// Estimator applies it to evaluation and prediction graphs: outside training nothing
// changes a variable or the step counter, whatever model_fn built.
Graph drop_updates(const Graph& g);

// Merges nodes that compute the same thing: same op, inputs and attributes (sources
// other than constants and assigns are never merged: they have identity).
Graph cse(const Graph& g);

// Local rewrites that make the graph cheaper and never change a value: casts to the
// same type, double casts that widen then narrow back exactly, x*1, x+0, x-0, x/1,
// reshape of reshape, stop_gradient (only matters to autodiff), broadcast_to and reshape
// to the same shape.
Graph simplify(const Graph& g);

// Moves transposes below the elementwise ops and reductions that follow them, so that
// inverse transposes meet and cancel: TensorFlow's NHWC scripts transpose around every
// convolution and pooling (kiln's are NCHW), and conv -> transpose -> bias -> relu ->
// transpose -> pool becomes conv -> bias -> relu -> pool, which the epilogue, ReLU-mask
// and blocked-layout steps then recognise. An elementwise op moves when its full-size
// inputs are transposes of one permutation and its other inputs broadcast along at most
// one axis (a per-channel bias, a scalar; reshaped to broadcast the same way); a reduction
// reduces the matching axes. Named values and outputs keep their layout. Values are
// unchanged except for a reduction's summation order; a graph that would move more data
// than before is returned as it was.
Graph sink_transposes(const Graph& g);

// Inserts casts so that each op computes in the type the policy gives it: under
// mixed_bfloat16/mixed_float16, ops marked Low in the op table (matmul, conv) take the low
// type; Follow ops stay low when their float inputs are; Keep ops (exp, log, reductions,
// losses) compute in float32. Variables stay float32 and are cast once at their first use,
// the cast shared by all uses; values written by assign and graph outputs keep their
// original type. force_fp16 computes every float op in float16; force_fp32 every float op
// in float32 (also ops the graph wrote in a 16-bit type). `original` returns the graph
// unchanged.
Graph apply_precision(const Graph& g, PrecisionPolicy policy);

// Where oneDNN has no float16 kernels (LowerOptions::float16_in_float32): every float16
// value is held in a float32 buffer instead, rounded to float16 where it is computed (a
// cast to float16 and back, which loops fuse), so products run oneDNN's float32 kernels on
// the values a float16 product would read and give the values it would give (a dense or
// conv2d_bias node: its one rounding after the bias, addend and ReLU). Float16 sources,
// assigns to float16 variables and float16 outputs keep their type (converted exactly at
// the edge). A graph without float16 values is returned unchanged.
Graph hold_float16_in_float32(const Graph& g);

// Folds relu?(matmul(a, b) + bias + addend) — bias, addend or both — into
// dense(a, b, bias?, addend?) {relu}, and relu?(conv2d(x, w) + bias) into
// conv2d_bias(x, w, bias) {relu}, which oneDNN computes with post-ops (the bias added to
// the float32 accumulator, then the addend, ReLU, one rounding) instead of a loop that
// reads the product back: a residual connection's sum, or a gradient's second term,
// costs no pass of its own. Only float32/bfloat16 products used once (2-D matmuls), with
// a bias row [n] / [1, n] or one per channel ([o,1,1], [1,o,1,1]), and an addend of the
// product's shape and type; the product and sums are left dead for DCE. Under mixed
// precision the result is rounded once, not after the product and again after each sum:
// slightly more accurate, and the interpreter runs the same node. `float16`: float16
// products fold too, with the same one rounding — only for float16 that will be held in
// float32 (hold_float16_in_float32): oneDNN's float16 kernels take no post-ops.
Graph fuse_epilogues(const Graph& g, bool float16 = false);

// Folds ReLU's gradient mask into a max pooling's gradient on the ReLU's output:
// select(greater(x, 0), max_pool2d_grad(x, dy), 0) becomes max_pool2d_grad(x, dy)
// {positive=1}, which passes dy only to maxima above 0. Saves a pass over the largest
// activations of a CNN's backward. The pooling gradient must have no other use.
Graph fuse_relu_masks(const Graph& g);

// Gradient bucketing for data-parallel training: consecutive float32/int32/int64
// all_reduce nodes of one type become one all_reduce of several inputs (one MPI call, its
// result a flat vector), cut back into the original tensors with slice + reshape. A
// bucket holds at most `bucket_bytes` bytes (a larger tensor goes alone) and never a node
// that depends on one of its own members; buckets are formed in node order and emitted once
// all their inputs exist, consumers waiting for them. 0 leaves the graph unchanged (one
// call per all_reduce). Every rank compiles the same graph, so all issue the same calls in
// the same order.
Graph bucket_all_reduces(const Graph& g, int64_t bucket_bytes);

// The readers of all_reduce results (optimizer updates) after every node that reads none
// (the rest of the backward pass), so that a compiled step's sums overlap that compute
// (src/passes/all_reduce_overlap.cpp). A graph without all_reduces is returned as it is.
Graph defer_all_reduce_readers(const Graph& g);

struct LowerOptions {
  PrecisionPolicy policy = PrecisionPolicy::original;
  // Non-empty: write the IR after each pass to <dump_dir>/<index>-<pass>.kir, the input as
  // 0-input.kir. (compile_cpu dumps through after_pass instead, into a folder per graph.)
  std::string dump_dir{};
  // If set, called with the same index, pass name and graph as the dump.
  std::function<void(int index, const char* pass, const Graph& g)> after_pass{};
  // bucket_all_reduces' bucket size in bytes; 0 = one MPI call per all_reduce.
  int64_t all_reduce_bucket_bytes = 0;
  // Hold float16 values in float32 after the precision pass (hold_float16_in_float32):
  // what compiled steps and the interpreter do where oneDNN has no float16 kernels.
  bool float16_in_float32 = false;
};

// The single ordered list of passes: verify -> precision -> simplify -> CSE -> transposes
// -> epilogues -> [float16 held in float32] -> ReLU masks -> DCE -> all_reduce buckets ->
// all_reduce readers deferred.
// The verifier runs after every pass in debug builds.
Graph lower(const Graph& g, const LowerOptions& options);

}  // namespace kiln::passes
