// The collective: the input's sum over the ranks of the job, by kiln::World (MPI); with
// several inputs (a bucket), their elements one after another, summed by one call. The CPU
// backend reduces its step buffers in place through all_reduce_in_place (Lowering::fallback).
#include <cstring>
#include <vector>

#include "backend/interp/kernels.h"
#include "kiln/base/error.h"
#include "kiln/dist/world.h"

namespace kiln::interp {
namespace {

World& world_of(const Node& n) {
  World& world = World::get();
  const int64_t expected = n.attrs.i("world_size");
  if (expected != world.size())
    KILN_THROW(GraphError) << "[all_reduce] " << world.prefix() << "the graph was built for " << expected
                           << " ranks but this job has " << world.size()
                           << "; build the graph in the job that runs it";
  return world;
}

bool mpi_sums(DType t) { return t == DType::f32 || t == DType::i32 || t == DType::i64; }

}  // namespace

bool all_reduce_in_place(const Graph& g, const Node& n, std::span<const void* const> ins, void* out,
                         int64_t* started) {
  if (!mpi_sums(n.dtype)) return false;
  World& world = world_of(n);
  auto* at = static_cast<std::byte*>(out);
  for (size_t i = 0; i < ins.size(); ++i) {
    const size_t bytes = static_cast<size_t>(numel(g.node(n.inputs[i]).shape)) * dtype_size(n.dtype);
    if (ins[i] != at) std::memmove(at, ins[i], bytes);
    at += bytes;
  }
  if (started) *started = world.all_reduce_sum_start(out, numel(n.shape), n.dtype);
  else world.all_reduce_sum(out, numel(n.shape), n.dtype);
  return true;
}

Array interp_all_reduce(const Node& n, Inputs in) {
  Array out = Array::uninitialized(n.dtype, n.shape);
  if (mpi_sums(n.dtype)) {
    World& world = world_of(n);
    std::byte* at = out.bytes();
    for (const Array* x : in) {
      std::memcpy(at, x->bytes(), x->nbytes());
      at += x->nbytes();
    }
    world.all_reduce_sum(out.bytes(), out.numel(), n.dtype);
    return out;
  }
  // float16, bfloat16: MPI has no such types; summed in float32, rounded once.
  World& world = world_of(n);
  std::vector<float> sum;
  for (const Array* x : in) {
    const std::vector<float> f = x->to_floats();
    sum.insert(sum.end(), f.begin(), f.end());
  }
  world.all_reduce_sum(sum.data(), static_cast<int64_t>(sum.size()), DType::f32);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, sum[static_cast<size_t>(i)]);
  return out;
}

}  // namespace kiln::interp
