// The random op: every element a pure function of (seed, stream, step, rank, index), from
// the header the compiled step's prelude embeds (ir/philox.h), so both give the same bits.
#include "backend/interp/kernels.h"
#include "ir/philox.h"

namespace kiln::interp {

Array interp_random(const Node& n, Inputs in) {
  const auto seed = static_cast<uint64_t>(in[0]->data<int64_t>()[0]);
  const auto step = static_cast<uint64_t>(in[1]->data<int64_t>()[0]);
  const auto rank = static_cast<uint64_t>(in[2]->data<int64_t>()[0]);
  const auto stream = static_cast<uint64_t>(n.attrs.i("stream"));
  const std::string& dist = n.attrs.s("distribution");
  Array out(DType::f32, n.shape);
  float* o = out.data<float>();
  const int64_t count = out.numel();
  for (int64_t i = 0; i < count; ++i) {
    const auto e = static_cast<uint64_t>(i);
    o[i] = dist == "uniform" ? kiln_philox::uniform(seed, stream, step, rank, e)
           : dist == "normal" ? kiln_philox::normal(seed, stream, step, rank, e)
                              : kiln_philox::truncated_normal(seed, stream, step, rank, e);
  }
  return out;
}

}  // namespace kiln::interp
