// The collective: the input's sum over the ranks of the job, by kiln::World (MPI). The CPU
// backend reduces its step buffer in place through all_reduce_in_place (Lowering::fallback).
#include <cstring>
#include <vector>

#include "backend/interp/kernels.h"
#include "kiln/error.h"
#include "kiln/world.h"

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

bool all_reduce_in_place(const Node& n, const void* in, void* out) {
  if (!mpi_sums(n.dtype)) return false;
  World& world = world_of(n);
  const int64_t count = numel(n.shape);
  if (in != out) std::memmove(out, in, static_cast<size_t>(count) * dtype_size(n.dtype));
  world.all_reduce_sum(out, count, n.dtype);
  return true;
}

Array interp_all_reduce(const Node& n, Inputs in) {
  if (mpi_sums(n.dtype)) {
    Array out = Array::uninitialized(n.dtype, n.shape);
    all_reduce_in_place(n, in[0]->bytes(), out.bytes());
    return out;
  }
  // float16, bfloat16: MPI has no such types; summed in float32, rounded once.
  World& world = world_of(n);
  std::vector<float> sum = in[0]->to_floats();
  world.all_reduce_sum(sum.data(), static_cast<int64_t>(sum.size()), DType::f32);
  Array out(n.dtype, n.shape);
  for (int64_t i = 0; i < out.numel(); ++i) out.set(i, sum[static_cast<size_t>(i)]);
  return out;
}

}  // namespace kiln::interp
