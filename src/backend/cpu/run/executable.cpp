#include "backend/cpu/run/executable.h"

#include "kiln/ir/ops.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "backend/cpu/run/library_calls.h"
#include "backend/denormals.h"
#include "backend/cpu/run/step_profile.h"
#include "backend/interp/kernels.h"
#include "kiln/base/error.h"
#include "kiln/dist/world.h"

namespace kiln::cpu {
namespace {

class CompiledExecutable final : public Executable {
 public:
  CompiledExecutable(Schedule schedule, std::unique_ptr<SharedObject> object, const std::string& profile_title,
                     int profile_rows)
      : schedule_(std::move(schedule)),
        object_(std::move(object)),
        profile_title_(profile_title),
        profile_rows_(static_cast<size_t>(std::max(profile_rows, 1))) {
    arena_.resize(static_cast<size_t>(schedule_.arena_bytes / 64 + 1));
    table_.assign(schedule_.buffers.size(), nullptr);
    // Hyperparameters: their values are this graph's, the code is any graph's of this shape.
    for (size_t b = 0; b < schedule_.buffers.size(); ++b) {
      if (schedule_.buffers[b].kind != BufferKind::hyperparameter) continue;
      const Node& n = schedule_.graph.node(schedule_.buffers[b].node);
      hyperparameters_.emplace_back(b, constant_array(n));
    }
    for (auto& [b, value] : hyperparameters_) table_[b] = value.bytes();  // run() leaves them
    runtime_ = library_runtime();
    runtime_.fallback = &CompiledExecutable::fallback;
    runtime_.wait = &CompiledExecutable::wait;
    started_.assign(schedule_.steps.size(), 0);
    if (!profile_title_.empty()) {
      profile_.emplace(schedule_.steps.size());
      runtime_.tick = &CompiledExecutable::tick;
    }
  }

  ~CompiledExecutable() override {
    if (profile_) std::fputs(profile_->report(schedule_, profile_title_, profile_rows_).c_str(), stderr);
  }

  Fetches run(const Feeds& feeds, Variables& vars) override {
    const FlushDenormals flush;
    const Graph& g = schedule_.graph;
    auto* arena = reinterpret_cast<std::byte*>(arena_.data());
    for (size_t b = 0; b < schedule_.buffers.size(); ++b) {
      const Buffer& buf = schedule_.buffers[b];
      const Node& n = g.node(buf.node);
      if (buf.kind == BufferKind::arena) {
        table_[b] = arena + buf.offset;
      } else if (buf.kind == BufferKind::variable_in_place) {
        table_[b] = checked(g.node(buf.variable), vars, "variable", "has no value for variable").bytes();
      } else if (buf.kind == BufferKind::hyperparameter) {
        continue;  // set once, by the constructor
      } else if (buf.kind == BufferKind::feed) {
        table_[b] = const_cast<std::byte*>(checked(n, feeds, "feed", "no value fed for placeholder").bytes());
      } else {
        table_[b] = checked(n, vars, "variable", "has no value (call initialize_variables) for variable").bytes();
      }
    }
    if (profile_) profile_->begin();
    try {
      object_->step()(&runtime_, this, table_.data());
    } catch (...) {
      // A step that failed may have left sums running into the arena: let them finish
      // before anything else touches it (their own errors are the lesser news).
      for (int64_t& t : started_) {
        try {
          World::get().wait(std::exchange(t, 0));
        } catch (...) {
        }
      }
      throw;
    }

    Fetches out;
    for (const Output& o : g.outputs()) out[o.name] = array_of(o.value);
    // Assigns take effect at the end of the step: read every new value before writing any.
    std::vector<std::pair<std::string, Array>> writes;
    for (ValueId a : g.assigns())
      if (!schedule_.in_place(a)) writes.emplace_back(g.node(g.node(a).inputs[0]).name, array_of(g.node(a).inputs[1]));
    for (auto& [name, value] : writes) {
      Array& dst = vars[name];
      std::memcpy(dst.bytes(), value.bytes(), value.nbytes());
    }
    return out;
  }

 private:
  struct alignas(64) Block {
    std::byte bytes[64];
  };

  template <class Map>
  static const Array& checked(const Node& n, const Map& m, const char* what, const char* missing) {
    auto it = m.find(n.name);
    if (it == m.end()) KILN_THROW(GraphError) << "[run] " << missing << " '" << n.name << "'";
    const Array& a = it->second;
    if (a.dtype() != n.dtype || a.shape() != n.shape)
      KILN_THROW(GraphError) << "[run] " << what << " '" << n.name << "' is " << dtype_name(a.dtype())
                             << shape_str(a.shape()) << ", the graph expects " << dtype_name(n.dtype) << shape_str(n.shape);
    return a;
  }
  template <class Map>
  static Array& checked(const Node& n, Map& m, const char* what, const char* missing) {
    return const_cast<Array&>(checked(n, static_cast<const Map&>(m), what, missing));
  }

  Array array_of(ValueId v) const {
    const Node& n = schedule_.graph.node(v);
    Array a = Array::uninitialized(n.dtype, n.shape);
    std::memcpy(a.bytes(), table_[schedule_.buffer_of[v]], a.nbytes());
    return a;
  }

  static void tick(void* host, int step) { static_cast<CompiledExecutable*>(host)->profile_->tick(step); }

  // The all_reduce of `step`, if it was only started, is done once this returns.
  static void wait(void* host, int step) {
    auto* self = static_cast<CompiledExecutable*>(host);
    World::get().wait(std::exchange(self->started_[static_cast<size_t>(step)], 0));
  }

  // Runs one step with the interpreter's kernel: buffers in, buffer out.
  static void fallback(void* host, int step, void** buffers) {
    auto* self = static_cast<CompiledExecutable*>(host);
    const Schedule& s = self->schedule_;
    const Node& n = s.graph.node(s.steps[step].node());
    // The collective sums the step's own buffer: no copies through Arrays (a bucket packs
    // its inputs into it first).
    // With overlap, it only starts the sum: generated code waits before the buffer's next use.
    if (n.op == Op::all_reduce) {
      std::vector<const void*> ins;
      for (ValueId x : n.inputs) ins.push_back(buffers[s.buffer_of[x]]);
      int64_t* started = World::get().overlap() ? &self->started_[static_cast<size_t>(step)] : nullptr;
      if (interp::all_reduce_in_place(s.graph, n, ins, buffers[s.buffer_of[s.steps[step].node()]], started)) return;
    }
    std::vector<Array> ins;
    std::vector<const Array*> ptrs;
    for (ValueId x : n.inputs) {
      const Node& xn = s.graph.node(x);
      Array a = Array::uninitialized(xn.dtype, xn.shape);
      std::memcpy(a.bytes(), buffers[s.buffer_of[x]], a.nbytes());
      ins.push_back(std::move(a));
    }
    for (const Array& a : ins) ptrs.push_back(&a);
    const Array out = interp::run_kernel(n, ptrs);
    std::memcpy(buffers[s.buffer_of[s.steps[step].node()]], out.bytes(), out.nbytes());
  }

  Schedule schedule_;
  std::unique_ptr<SharedObject> object_;
  std::vector<Block> arena_;
  std::vector<void*> table_;
  std::vector<std::pair<size_t, Array>> hyperparameters_;  // (buffer, its value)
  Runtime runtime_{};
  std::optional<StepProfile> profile_;  // when profiling
  std::vector<int64_t> started_;        // per step: the ticket of a started all_reduce, or 0
  std::string profile_title_;
  size_t profile_rows_;
};

}  // namespace

std::unique_ptr<Executable> make_compiled_executable(Schedule schedule, std::unique_ptr<SharedObject> object,
                                                     const std::string& profile_title, int profile_rows) {
  return std::make_unique<CompiledExecutable>(std::move(schedule), std::move(object), profile_title, profile_rows);
}

}  // namespace kiln::cpu
