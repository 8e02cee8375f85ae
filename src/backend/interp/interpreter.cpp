#include <array>

#include "backend/denormals.h"
#include "backend/interp/kernels.h"
#include "kiln/base/error.h"
#include "kiln/backend/runtime.h"

namespace kiln {
namespace {

using Kernel = Array (*)(const Node&, interp::Inputs);
constexpr std::array<Kernel, kNumOps> kKernels = {
#define KILN_X(name, ...) &interp::interp_##name,
    KILN_OPS(KILN_X)
#undef KILN_X
};

}  // namespace

Array interp::run_kernel(const Node& n, interp::Inputs in) { return kKernels[static_cast<size_t>(n.op)](n, in); }

namespace {

class Interpreter final : public Executable {
 public:
  explicit Interpreter(const Graph& g) : g_(g) {
    verify(g_);
    // Only what the outputs and assigns need is computed.
    live_.assign(g_.size(), false);
    std::vector<ValueId> work;
    for (const Output& o : g_.outputs()) work.push_back(o.value);
    for (ValueId a : g_.assigns()) work.push_back(a);
    while (!work.empty()) {
      const ValueId id = work.back();
      work.pop_back();
      if (live_[id]) continue;
      live_[id] = true;
      for (ValueId in : g_.node(id).inputs) work.push_back(in);
    }
  }

  Fetches run(const Feeds& feeds, Variables& vars) override {
    const FlushDenormals flush;
    // Feeds and variables are read in place; kernel results are owned here.
    std::vector<Array> owned(g_.size());
    std::vector<const Array*> values(g_.size(), nullptr);
    // Last use of each value, so that intermediates are freed as soon as possible.
    std::vector<int64_t> last_use(g_.size(), -1);
    for (size_t i = 0; i < g_.size(); ++i)
      if (live_[i])
        for (ValueId in : g_.nodes()[i].inputs) last_use[in] = static_cast<int64_t>(i);
    for (const Output& o : g_.outputs()) last_use[o.value] = static_cast<int64_t>(g_.size());
    for (ValueId a : g_.assigns()) last_use[a] = static_cast<int64_t>(g_.size());

    std::vector<const Array*> ins;
    for (size_t i = 0; i < g_.size(); ++i) {
      if (!live_[i]) continue;
      const Node& n = g_.nodes()[i];
      if (n.op == Op::placeholder) {
        values[i] = &fed(n, feeds);
      } else if (n.op == Op::variable) {
        values[i] = &stored(n, vars);
      } else {
        ins.clear();
        for (ValueId in : n.inputs) ins.push_back(values[in]);
        owned[i] = kKernels[static_cast<size_t>(n.op)](n, ins);
        values[i] = &owned[i];
      }
      for (ValueId in : n.inputs)
        if (last_use[in] == static_cast<int64_t>(i)) owned[in] = Array();
    }
    Fetches out;
    for (const Output& o : g_.outputs()) out[o.name] = *values[o.value];
    for (ValueId a : g_.assigns())
      if (live_[a]) vars[g_.node(g_.node(a).inputs[0]).name] = std::move(owned[a]);
    return out;
  }

 private:
  static const Array& check(const Node& n, const Array& a, const char* what) {
    if (a.dtype() != n.dtype || a.shape() != n.shape)
      KILN_THROW(GraphError) << "[run] " << what << " '" << n.name << "' is " << dtype_name(a.dtype())
                             << shape_str(a.shape()) << ", the graph expects " << dtype_name(n.dtype)
                             << shape_str(n.shape);
    return a;
  }
  static const Array& fed(const Node& n, const Feeds& feeds) {
    auto it = feeds.find(n.name);
    if (it == feeds.end()) KILN_THROW(GraphError) << "[run] no value fed for placeholder '" << n.name << "'";
    return check(n, it->second, "feed");
  }
  static const Array& stored(const Node& n, const Variables& vars) {
    auto it = vars.find(n.name);
    if (it == vars.end())
      KILN_THROW(GraphError) << "[run] variable '" << n.name << "' has no value (call initialize_variables)";
    return check(n, it->second, "variable");
  }

  Graph g_;
  std::vector<bool> live_;
};

}  // namespace

std::unique_ptr<Executable> make_interpreter(const Graph& g) { return std::make_unique<Interpreter>(g); }

}  // namespace kiln
