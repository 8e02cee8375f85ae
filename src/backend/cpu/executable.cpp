// The compiled executable: lowers, schedules, generates, compiles and loads a graph, then
// runs steps by filling the buffer table and calling the generated kiln_step.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "backend/cpu/abi.h"
#include "cache/key.h"
#include "cache/session.h"
#include "backend/cpu/codegen.h"
#include "backend/cpu/half_convert.h"
#include "backend/cpu/loader.h"
#include "backend/cpu/schedule.h"
#include "backend/cpu/step_profile.h"
#include "backend/cpu/toolchain.h"
#include "backend/interp/kernels.h"
#include "backend/onednn/onednn.h"
#include "kiln/compiler.h"
#include "kiln/error.h"
#include "kiln/text.h"
#include "passes/passes.h"

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// float16 has no oneDNN kernels here: widen the (exact) float16 operands to float32, run
// the float32 primitive, round the result once.
template <class F>
void widened_f16(const void* a, int64_t na, const void* b, int64_t nb, void* out, int64_t nout, F run_f32) {
  thread_local std::vector<float> fa, fb, fo;
  fa.resize(na);
  fb.resize(nb);
  fo.resize(nout);
  cpu::f16_to_f32(static_cast<const uint16_t*>(a), fa.data(), na);
  cpu::f16_to_f32(static_cast<const uint16_t*>(b), fb.data(), nb);
  run_f32(na ? fa.data() : nullptr, nb ? fb.data() : nullptr, fo.data());
  cpu::f32_to_f16(fo.data(), static_cast<uint16_t*>(out), nout);
}

// The bias/ReLU a generated step passes with a product (see Runtime in abi.h).
onednn::Epilogue epilogue_of(DType t, const void* bias, int bias_dtype, int relu) {
  KILN_CHECK(!bias || t != DType::f16) << "a float16 product has no epilogue";
  return {bias, static_cast<DType>(bias_dtype) == DType::bf16, relu != 0};
}

void rt_matmul(int dtype, const void* a, const void* b, void* c, int64_t batch, int64_t m, int64_t n, int64_t k,
               int ta, int tb, const void* bias, int bias_dtype, int relu) {
  const auto t = static_cast<DType>(dtype);
  const onednn::Epilogue e = epilogue_of(t, bias, bias_dtype, relu);
  if (t == DType::f32) {
    onednn::matmul_f32(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), batch, m, n,
                       k, ta, tb, e);
  } else if (t == DType::bf16) {
    onednn::matmul_bf16(static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), static_cast<uint16_t*>(c),
                        batch, m, n, k, ta, tb, e);
  } else {
    // float16: oneDNN 2.6 has no CPU f16 matmul. Operands are already float16 values, so
    // widening them is exact; the product accumulates in float32 and is rounded once.
    widened_f16(a, batch * m * k, b, batch * k * n, c, batch * m * n, [&](float* fa, float* fb, float* fc) {
      onednn::matmul_f32(fa, fb, fc, batch, m, n, k, ta, tb);
    });
  }
}

onednn::ConvGeom geom_of(const int64_t* v) {
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]};
}

void rt_conv(int pass, int dtype, const void* a, const void* b, void* out, const int64_t* geom, const void* bias,
             int bias_dtype, int relu) {
  const onednn::ConvGeom g = geom_of(geom);
  const auto p = static_cast<onednn::ConvPass>(pass);
  const auto t = static_cast<DType>(dtype);
  const onednn::Epilogue e = epilogue_of(t, bias, bias_dtype, relu);
  if (t != DType::f16) return onednn::conv2d(p, t == DType::bf16, a, b, out, g, e);
  const int64_t x = g.n * g.c * g.h * g.w, w = g.o * g.c * g.kh * g.kw, y = g.n * g.o * g.oh * g.ow;
  const int64_t na = p == onednn::ConvPass::backward_input ? y : x;
  const int64_t nb = p == onednn::ConvPass::forward ? w : (p == onednn::ConvPass::backward_input ? w : y);
  const int64_t no = p == onednn::ConvPass::forward ? y : (p == onednn::ConvPass::backward_input ? x : w);
  widened_f16(a, na, b, nb, out, no, [&](float* fa, float* fb, float* fo) { onednn::conv2d(p, false, fa, fb, fo, g); });
}

class CompiledExecutable final : public Executable {
 public:
  CompiledExecutable(const Graph& g, const CompileOptions& options, CompileReport& report) {
    auto t = Clock::now();
    passes::LowerOptions lo;
    lo.policy = options.policy;
    lo.dump_dir = options.dump_ir_dir;
    // The canonical form is compiled, not g itself: graphs that differ only in creation
    // order, dead nodes or intermediate names get the same schedule and the same code,
    // which is what lets the compile cache key on the canonical text.
    const std::string canonical = print_graph(g, TextForm::canonical);
    schedule_ = cpu::make_schedule(passes::lower(parse_graph(canonical), lo));
    report.passes_seconds = since(t);

    report.kernels = schedule_.kernel_count();
    for (const auto& st : schedule_.steps) {
      report.library_calls += st.kind == cpu::StepKind::library;
      report.fallback_ops += st.kind == cpu::StepKind::fallback;
    }
    report.arena_bytes = schedule_.arena_bytes;
    report.unplanned_bytes = schedule_.unplanned_bytes;

    const cpu::Toolchain& tc = cpu::host_toolchain();
    report.compiler = tc.cxx + " (" + tc.identity + ")";
    // The source is generated every time (about a millisecond): it is part of the cache
    // key, so a kiln whose code generator changed never loads another kiln's object. A
    // hit skips the C++ compile, which is where the time goes.
    t = Clock::now();
    const std::string source = cpu::generate_source(schedule_);
    report.codegen_seconds = since(t);
    std::optional<cache::Session> cached;
    std::string cache_dir = options.cache_dir;
    if (cache_dir.empty())
      if (const char* env = std::getenv("KILN_CACHE_DIR")) cache_dir = env;
    if (!cache_dir.empty()) {
      cached.emplace(cache::Settings{cache_dir, options.cache_size_cap_bytes, options.cache_strict,
                                     options.cache_lock_timeout_seconds},
                     cache::compile_key_ingredients(canonical, options.policy, source));
      report.cache_key = cached->key();
      t = Clock::now();  // on a hit, load_seconds includes the lookup and the checksum
      if (const auto hit = cached->find()) {
        try {
          object_ = std::make_unique<cpu::SharedObject>(*hit);
          report.load_seconds = since(t);
          cached->loaded();
        } catch (const SystemError& e) {
          cached->reject(std::string("it cannot be loaded: ") + e.what());
        }
      }
    }
    if (!object_) compile_and_load(source, options, tc, report, cached ? &*cached : nullptr, g);
    if (cached) {
      report.cache = cached->status();
      report.cache_note = cached->note();
    }

    arena_.resize(static_cast<size_t>(schedule_.arena_bytes / 64 + 1));
    table_.assign(schedule_.buffers.size(), nullptr);
    runtime_ = {cpu::kAbiVersion, &rt_matmul, &rt_conv, &CompiledExecutable::fallback, nullptr};
    if (cpu::profiling_requested()) {
      profile_.emplace(schedule_.steps.size());
      profile_title_ = std::to_string(g.size()) + " nodes, " + std::string(precision_policy_name(options.policy));
      runtime_.tick = &CompiledExecutable::tick;
    }
  }

  ~CompiledExecutable() override {
    if (profile_) std::fputs(profile_->report(schedule_, profile_title_).c_str(), stderr);
  }

  // Generates the source, compiles it in a private temporary directory, loads it, and
  // publishes it to the cache (when one is in use).
  void compile_and_load(const std::string& source, const CompileOptions& options, const cpu::Toolchain& tc,
                        CompileReport& report, cache::Session* cached, const Graph& g) {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "kiln-build-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) KILN_THROW(SystemError) << "[compiler] cannot create a build directory in " << fs::temp_directory_path();
    const fs::path dir = tmpl;
    const fs::path src = dir / "step.cpp", so = dir / "step.so";
    {
      std::ofstream out(src);
      out << source;
      out.close();
      if (!out) KILN_THROW(SystemError) << "[compiler] cannot write " << src;
    }
    std::string keep = options.dump_code_dir;
    if (keep.empty())
      if (const char* env = std::getenv("KILN_DUMP_CODE")) keep = env;
    if (!keep.empty()) {
      fs::create_directories(keep);
      fs::copy_file(src, fs::path(keep) / "step.cpp", fs::copy_options::overwrite_existing);
    }
    auto t = Clock::now();
    try {
      cpu::compile_shared_object(tc, src.string(), so.string());
    } catch (...) {
      fs::remove_all(dir);
      throw;
    }
    report.compile_seconds = since(t);
    t = Clock::now();
    try {
      object_ = std::make_unique<cpu::SharedObject>(so.string());
      report.load_seconds = since(t);
      if (cached) {
        nlohmann::json meta;
        meta["seconds"] = {{"passes", report.passes_seconds},
                           {"codegen", report.codegen_seconds},
                           {"compile", report.compile_seconds},
                           {"load", report.load_seconds}};
        meta["sizes"] = {{"source", static_cast<int64_t>(source.size())}};
        meta["graph"] = {{"nodes", g.size()}, {"outputs", static_cast<int64_t>(g.outputs().size())}};
        meta["precision_policy"] = std::string(precision_policy_name(options.policy));
        meta["kernels"] = report.kernels;
        meta["library_calls"] = report.library_calls;
        meta["arena_bytes"] = report.arena_bytes;
        cached->publish(so.string(), std::move(meta));
      }
    } catch (...) {
      fs::remove_all(dir);
      throw;
    }
    fs::remove_all(dir);  // the mapping stays valid after the file is gone
  }

  Fetches run(const Feeds& feeds, Variables& vars) override {
    const Graph& g = schedule_.graph;
    auto* arena = reinterpret_cast<std::byte*>(arena_.data());
    for (size_t b = 0; b < schedule_.buffers.size(); ++b) {
      const cpu::Buffer& buf = schedule_.buffers[b];
      const Node& n = g.node(buf.node);
      if (buf.kind == cpu::BufferKind::arena) {
        table_[b] = arena + buf.offset;
      } else if (buf.kind == cpu::BufferKind::variable_in_place) {
        table_[b] = checked(g.node(buf.variable), vars, "variable", "has no value for variable").bytes();
      } else if (buf.kind == cpu::BufferKind::feed) {
        table_[b] = const_cast<std::byte*>(checked(n, feeds, "feed", "no value fed for placeholder").bytes());
      } else {
        table_[b] = checked(n, vars, "variable", "has no value (call initialize_variables) for variable").bytes();
      }
    }
    if (profile_) profile_->begin();
    object_->step()(&runtime_, this, table_.data());

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

  // Runs one step with the interpreter's kernel: buffers in, buffer out.
  static void fallback(void* host, int step, void** buffers) {
    auto* self = static_cast<CompiledExecutable*>(host);
    const cpu::Schedule& s = self->schedule_;
    const Node& n = s.graph.node(s.steps[step].node());
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

  cpu::Schedule schedule_;
  std::unique_ptr<cpu::SharedObject> object_;
  std::vector<Block> arena_;
  std::vector<void*> table_;
  cpu::Runtime runtime_{};
  std::optional<cpu::StepProfile> profile_;  // KILN_PROFILE
  std::string profile_title_;
};

}  // namespace

std::unique_ptr<Executable> compile_cpu(const Graph& g, const CompileOptions& options, CompileReport* report) {
  CompileReport local;
  return std::make_unique<CompiledExecutable>(g, options, report ? *report : local);
}

}  // namespace kiln
