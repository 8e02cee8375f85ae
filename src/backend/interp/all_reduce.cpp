// The collective: the input's sum over the ranks of the job, by kiln::World (MPI). The CPU
// backend runs this kernel from the compiled step (Lowering::fallback).
#include <cstring>
#include <vector>

#include "backend/interp/kernels.h"
#include "kiln/error.h"
#include "kiln/world.h"

namespace kiln::interp {

Array interp_all_reduce(const Node& n, Inputs in) {
  World& world = World::get();
  const int64_t expected = n.attrs.i("world_size");
  if (expected != world.size())
    KILN_THROW(GraphError) << "[all_reduce] " << world.prefix() << "the graph was built for " << expected
                           << " ranks but this job has " << world.size()
                           << "; build the graph in the job that runs it";
  if (n.dtype == DType::f16 || n.dtype == DType::bf16) {  // MPI has no such types: sum in float32, round once
    std::vector<float> sum = in[0]->to_floats();
    world.all_reduce_sum(sum.data(), static_cast<int64_t>(sum.size()), DType::f32);
    Array out(n.dtype, n.shape);
    for (int64_t i = 0; i < out.numel(); ++i) out.set(i, sum[static_cast<size_t>(i)]);
    return out;
  }
  Array out = Array::uninitialized(n.dtype, n.shape);
  std::memcpy(out.bytes(), in[0]->bytes(), out.nbytes());
  world.all_reduce_sum(out.bytes(), out.numel(), n.dtype);
  return out;
}

}  // namespace kiln::interp
