#include "kiln/ir/op.h"

#include <array>

namespace kiln {
namespace {
constexpr std::array<OpInfo, kNumOps> kTable = {{
#define KILN_X(name, arity, family, diff, fusible, prec, attrs) \
  {#name, arity, OpFamily::family, diff, fusible, OpPrecision::prec, attrs},
    KILN_OPS(KILN_X)
#undef KILN_X
}};
#define KILN_X(...) +1
static_assert(0 KILN_OPS(KILN_X) == KILN_OP_COUNT, "KILN_OP_COUNT does not match the op table");
#undef KILN_X
}  // namespace

const OpInfo& op_info(Op op) { return kTable[static_cast<size_t>(op)]; }

bool find_op(std::string_view name, Op* out) {
  for (size_t i = 0; i < kTable.size(); ++i)
    if (kTable[i].name == name) {
      *out = static_cast<Op>(i);
      return true;
    }
  return false;
}

}  // namespace kiln
