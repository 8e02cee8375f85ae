// Library steps: which Runtime call and which arguments follow from the op's family.
#include "backend/cpu/codegen/library.h"

#include <sstream>
#include <vector>

#include "backend/cpu/schedule/bias_gradient.h"
#include "backend/cpu/schedule/lowering.h"
#include "ir/conv_geometry.h"
#include "ir/dense_inputs.h"
#include "kiln/base/error.h"

namespace kiln::cpu {
namespace {

// The trailing arguments of a Runtime call and the comment that says what they are.
struct Tail {
  std::string args;                // after the shapes, e.g. "nullptr, 0, 0"
  std::vector<std::string> notes;  // joined into "  // a, b"
  std::string text() const {
    std::string out = ", " + args + ");";
    for (size_t i = 0; i < notes.size(); ++i) out += (i ? ", " : "  // ") + notes[i];
    return out + "\n";
  }
};

// The (bias, bias_dtype, relu) arguments of rt->matmul / rt->conv: a dense or
// conv2d_bias node's epilogue (its bias input and relu attribute), else none; for
// matmul then the addend (a dense node's, ir/dense_inputs.h).
Tail epilogue(const Schedule& s, const Node& n) {
  const OpFamily f = op_info(n.op).family;
  const bool matmul = f == OpFamily::Dense || f == OpFamily::MatMul;
  if (f != OpFamily::Dense && f != OpFamily::Conv2DBias) return {matmul ? "nullptr, 0, 0, nullptr" : "nullptr, 0, 0", {}};
  const DenseInputs d = f == OpFamily::Dense ? dense_inputs(n) : DenseInputs{n.inputs[2], -1};
  const ValueId bias = d.bias, addend = d.addend;
  const bool relu = n.attrs.i("relu") != 0;
  Tail t;
  t.args = bias < 0 ? "nullptr, 0, " : "B[" + std::to_string(s.buffer_of[bias]) + "], " +
                                            std::to_string(static_cast<int>(s.graph.node(bias).dtype)) + ", ";
  t.args += std::to_string(relu);
  if (matmul) t.args += addend < 0 ? ", nullptr" : ", B[" + std::to_string(s.buffer_of[addend]) + "]";
  if (bias >= 0) t.notes.push_back("+ bias");
  if (addend >= 0) t.notes.push_back("+ addend");
  if (relu) t.notes.push_back("relu");
  return t;
}

std::string matmul_call(const Schedule& s, const Step& st) {
  const Node& n = s.graph.node(st.node());
  const Shape a = s.graph.node(n.inputs[0]).shape;
  const size_t r = a.size();
  const bool ta = n.attrs.i("transpose_a") != 0, tb = n.attrs.i("transpose_b") != 0;
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < r; ++i) batch *= a[i];
  const int64_t m = n.shape[r - 2], nn = n.shape[r - 1], k = ta ? a[r - 2] : a[r - 1];
  std::ostringstream c;
  c << "  rt->matmul(" << static_cast<int>(n.dtype) << ", B[" << s.buffer_of[n.inputs[0]] << "], B["
    << s.buffer_of[n.inputs[1]] << "], B[" << s.buffer_of[st.node()] << "], " << batch << ", " << m << ", " << nn
    << ", " << k << ", " << ta << ", " << tb << epilogue(s, n).text();
  return c.str();
}

// The geometry as the 14 numbers of Runtime::conv, a static array named `name`.
std::string geometry_array(const std::string& name, const ConvGeometry& g) {
  static_assert(sizeof(ConvGeometry) == 14 * sizeof(int64_t), "Runtime::conv takes the 14 numbers of ConvGeometry");
  const int64_t v[14] = {g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.groups};
  std::string out = "  static const int64_t " + name + "[14] = {";
  for (int i = 0; i < 14; ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "};\n";
}

// A channel block as the runtime's conv takes it (abi.h): 0, 8 or 16, or 1 for channels
// last (Schedule::block_of holds the channel count there).
int layout_code(int block) { return block == 0 || block == 8 || block == 16 ? block : 1; }

// Every convolution family: rt->conv(pass, dtype, input 0, input 1, out, geometry, bias,
// bias_dtype, relu, layouts): the forward's epilogue, or backward_filter's bias gradient
// (bias_gradient.h), then the channel blocks of x and y (layout_plan.h).
std::string conv_call(const Schedule& s, const Step& st, size_t index) {
  const Node& n = s.graph.node(st.node());
  const ConvRoles roles = *conv_roles(s.graph, st.node());
  auto buf = [&](ValueId v) { return "B[" + std::to_string(s.buffer_of[v]) + "]"; };
  Tail tail = epilogue(s, n);
  if (const ValueId db = bias_gradient_of(s, st); db >= 0)
    tail = {buf(db) + ", " + std::to_string(static_cast<int>(s.graph.node(db).dtype)) + ", 0", {"+ bias gradient"}};
  const int bx = s.block(roles.x), by = s.block(roles.y);
  tail.args += ", " + std::to_string(layout_code(bx) + 256 * layout_code(by));
  if (bx || by) tail.notes.push_back("x " + block_layout_name(bx) + ", y " + block_layout_name(by));
  const std::string g = "g" + std::to_string(index);
  std::ostringstream c;
  c << geometry_array(g, conv_geometry(s.graph, n));
  c << "  rt->conv(" << static_cast<int>(roles.pass) << ", " << static_cast<int>(n.dtype) << ", " << buf(n.inputs[0])
    << ", " << buf(n.inputs[1]) << ", " << buf(st.node()) << ", " << g << tail.text();
  return c.str();
}

}  // namespace

std::string library_call(const Schedule& s, const Step& st, size_t index) {
  switch (op_info(s.graph.node(st.node()).op).family) {
    case OpFamily::MatMul:
    case OpFamily::Dense: return matmul_call(s, st);
    case OpFamily::Conv2D:
    case OpFamily::Conv2DBias:
    case OpFamily::Conv2DBackwardInput:
    case OpFamily::Conv2DBackwardFilter: return conv_call(s, st, index);
    default: break;
  }
  KILN_CHECK(false) << "no library call for " << op_name(s.graph.node(st.node()).op);
  return {};
}

}  // namespace kiln::cpu
