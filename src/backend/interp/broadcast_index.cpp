#include "kiln/base/error.h"
#include "backend/interp/kernels.h"

namespace kiln::interp {

BroadcastIndex::BroadcastIndex(const Shape& in, const Shape& out) : out_(out), in_strides_(out.size(), 0) {
  identity_ = in == out;
  const size_t lead = out.size() - in.size();
  const auto st = strides_of(in);
  for (size_t i = 0; i < in.size(); ++i) in_strides_[lead + i] = in[i] == 1 ? 0 : st[i];
}

int64_t BroadcastIndex::operator()(int64_t i) const {
  if (identity_) return i;
  int64_t off = 0;
  for (size_t ax = out_.size(); ax-- > 0;) {
    const int64_t d = out_[ax];
    off += (i % d) * in_strides_[ax];
    i /= d;
  }
  return off;
}

void not_a_kernel(const Node& n) {
  KILN_CHECK(false) << "op '" << op_name(n.op) << "' is evaluated by the interpreter, not by a kernel";
  std::abort();
}

}  // namespace kiln::interp
