// Gradient bucketing (Horovod's tensor fusion, PyTorch DDP's buckets, XLA's
// AllReduceCombiner): consecutive all_reduce nodes of one type become one all_reduce of
// several inputs, whose flat result is cut back into the original tensors by slice and
// reshape (index-mapping ops that the CPU backend fuses into the consumers: the
// 1/ranks scaling reads its gradient straight out of the bucket).
#include <algorithm>

#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {
namespace {

// What one MPI call can sum in place (float16/bfloat16 all_reduces widen on their own).
bool bucketable(const Node& n) {
  return n.op == Op::all_reduce && n.inputs.size() == 1 &&
         (n.dtype == DType::f32 || n.dtype == DType::i32 || n.dtype == DType::i64);
}

int64_t bytes_of(const Node& n) { return numel(n.shape) * static_cast<int64_t>(dtype_size(n.dtype)); }

// Buckets in node order: an all_reduce joins the open bucket when it has the bucket's
// type and ranks, fits in what is left of `bucket_bytes`, and does not depend on one of
// the bucket's members (a bucket is one call: all its inputs must exist before it).
std::vector<std::vector<ValueId>> plan_buckets(const Graph& g, int64_t bucket_bytes, std::vector<int>& bucket_of) {
  std::vector<std::vector<ValueId>> buckets;
  // The newest bucket whose result a value depends on (-1: none). Buckets are numbered in
  // order, so "depends on the open bucket" is "newest == the open bucket's number".
  std::vector<int> newest(g.size(), -1);
  int64_t open_bytes = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const auto id = static_cast<ValueId>(i);
    const Node& n = g.node(id);
    for (ValueId in : n.inputs) newest[i] = std::max({newest[i], newest[in], bucket_of[in]});
    if (!bucketable(n)) continue;
    const int open = static_cast<int>(buckets.size()) - 1;
    const bool joins = open >= 0 && newest[i] < open && open_bytes + bytes_of(n) <= bucket_bytes &&
                       g.node(buckets[open][0]).dtype == n.dtype &&
                       g.node(buckets[open][0]).attrs.i("world_size") == n.attrs.i("world_size");
    if (!joins) {
      buckets.emplace_back();
      open_bytes = 0;
    }
    buckets.back().push_back(id);
    bucket_of[i] = static_cast<int>(buckets.size()) - 1;
    open_bytes += bytes_of(n);
  }
  return buckets;
}

}  // namespace

Graph bucket_all_reduces(const Graph& g, int64_t bucket_bytes) {
  KILN_CHECK(bucket_bytes >= 0) << "bucket size " << bucket_bytes;
  if (bucket_bytes == 0) return g;
  std::vector<int> bucket_of(g.size(), -1);
  const std::vector<std::vector<ValueId>> buckets = plan_buckets(g, bucket_bytes, bucket_of);
  if (std::all_of(buckets.begin(), buckets.end(), [](const auto& b) { return b.size() == 1; })) return g;

  // Nodes are copied in their order, except that a bucket is emitted once its last member's
  // input exists, and whatever reads a member waits for its bucket (kept in order).
  Rewriter rw(g);
  std::vector<size_t> ready(buckets.size(), 0);
  auto emit_bucket = [&](const std::vector<ValueId>& members) {
    std::vector<ValueId> ins;
    for (ValueId m : members) ins.push_back(rw.mapped(g.node(m).inputs[0]));
    const Node& first = g.node(members[0]);
    const ValueId flat = rw.out().add(Op::all_reduce, ins, {{"world_size", first.attrs.i("world_size")}});
    int64_t at = 0;
    for (ValueId m : members) {
      const Node& n = g.node(m);
      const int64_t count = numel(n.shape);
      const ValueId part = rw.out().add(Op::slice, {flat}, {{"begin", std::vector<int64_t>{at}},
                                                            {"end", std::vector<int64_t>{at + count}}});
      const ValueId shaped = rw.out().add(Op::reshape, {part}, {{"shape", n.shape}});
      rw.alias(m, shaped);
      carry_name(rw.out(), n, shaped);
      at += count;
    }
  };
  // Copies `id` (or counts it into its bucket) when its inputs exist; true if it did. Sets
  // `emitted` when a bucket went out, after which waiting nodes may have become ready.
  bool emitted = false;
  auto place = [&](ValueId id) {
    const Node& n = g.node(id);
    for (ValueId in : n.inputs)
      if (!rw.done(in)) return false;
    const int b = bucket_of[id];
    if (b < 0 || buckets[b].size() == 1) {
      rw.copy(id);
    } else if (++ready[b] == buckets[b].size()) {
      emit_bucket(buckets[b]);
      emitted = true;
    }
    return true;
  };
  std::vector<ValueId> waiting;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!place(static_cast<ValueId>(i))) waiting.push_back(static_cast<ValueId>(i));
    while (emitted) {
      emitted = false;
      std::erase_if(waiting, place);
    }
  }
  KILN_CHECK(waiting.empty()) << waiting.size() << " nodes never got their inputs";
  return rw.finish();
}

}  // namespace kiln::passes
