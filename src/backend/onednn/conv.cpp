// Convolution through oneDNN. oneDNN's fast convolutions (jit:avx512_core, jit_bf16,
// brgconv) want channel-blocked activations (nChw16c, nChw8c on AVX2): on plain tensors it
// falls back to im2col + gemm, 2-6x slower. So each pass lets oneDNN choose its layouts
// (format_tag::any). kiln's buffers say how they are stored (ConvLayouts: the CPU
// schedule keeps activations blocked between convolutions and pooling where oneDNN wants
// it, layout_plan.h); an argument whose stored layout differs from the chosen one is
// reordered through a per-thread scratch buffer. Filters stay plain OIHW and are
// reordered every call (they are small).
#include <atomic>
#include <cstdlib>
#include <memory>
#include <optional>

#include "backend/onednn/bf16_fallback.h"
#include "backend/onednn/depthwise_loops.h"
#include "backend/onednn/geometry.h"
#include "backend/onednn/isa.h"
#include "kiln/base/error.h"

namespace kiln::onednn {
namespace {

// An activation's descriptor in the layout of channel block b (ConvLayouts): plain NCHW (0),
// nChw8c / nChw16c, or channels last (b = the channel count; with 8 or 16 channels that is
// the same memory as nChw<b>c).
dnnl::memory::desc stored_desc(const dnnl::memory::dims& d, dt t, int b) {
  if (b == 0) return dnnl::memory::desc(d, t, tag::nchw);
  if (b == 16 || b == 8) return dnnl::memory::desc(d, t, b == 16 ? tag::nChw16c : tag::nChw8c);
  KILN_CHECK(b == d[1]) << "no activation layout with channel block " << b << " for " << d[1] << " channels";
  return dnnl::memory::desc(d, t, tag::nhwc);
}

// The channel block of a chosen activation layout (as ConvLayouts): 0 plain NCHW (or
// channels last with one channel: the same memory), 16 or 8 for nChw16c / nChw8c, the
// channel count for channels last (NHWC); -1 for any other layout.
int block_of(const dnnl::memory::desc& chosen) {
  const dnnl::memory::dims d = api::dims_of(chosen);
  if (d.size() != 4) return -1;
  const dt t = api::type_of(chosen);
  if (chosen == dnnl::memory::desc(d, t, tag::nchw)) return 0;
  if (chosen == dnnl::memory::desc(d, t, tag::nhwc)) return d[1] == 1 ? 0 : static_cast<int>(d[1]);
  for (int b : {16, 8})
    if (d[1] % b == 0 && chosen == stored_desc(d, t, b)) return b;
  return -1;
}

// Whether two activation descriptors lay the same elements out at the same places.
bool same_layout(const dnnl::memory::desc& a, const dnnl::memory::desc& b) {
  if (a == b) return true;
  if (api::dims_of(a) != api::dims_of(b) || api::type_of(a) != api::type_of(b)) return false;
  const int ba = block_of(a);  // nChw16c with 16 channels is 16, as NHWC is
  return ba >= 0 && ba == block_of(b);
}

// One argument of a pass: the layout kiln stores it in, the layout the primitive runs
// on, and the reorder between them when they differ (stored -> chosen for inputs, back
// for the output).
struct Arg {
  int id;
  dnnl::memory::desc stored, chosen;
  std::optional<dnnl::reorder> reorder;
  bool counted = false;  // an activation reordered to or from whole blocks (blocked_activation_reorders)
};

struct ConvPrim {
  dnnl::primitive prim;
  Arg in[2], out;
  dnnl::memory::desc bias;  // forward: an epilogue's bias; backward_filter: the bias gradient
  bool loops = false;       // run kiln's depthwise loops instead of prim (depthwise_loops.h)
};

Arg arg(int id, const dnnl::memory::desc& stored, const dnnl::memory::desc& chosen, bool is_output) {
  // The same memory under another name (NHWC and nChw16c with 16 channels): no reorder,
  // and the buffer is passed under the chosen descriptor.
  Arg a{id, same_layout(stored, chosen) ? chosen : stored, chosen, std::nullopt};
  if (a.stored == chosen) return a;
  a.reorder = is_output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), chosen, engine(), stored))
                        : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), stored, engine(), chosen));
  a.counted = id != DNNL_ARG_WEIGHTS && id != DNNL_ARG_DIFF_WEIGHTS && api::dims_of(chosen)[1] >= 16 &&
              (block_of(stored) > 0 || block_of(chosen) > 0);
  return a;
}

// Whether kiln stores the pass's activations blocked. Blocked layouts pad channels up to a
// multiple of 16: with fewer channels the padding costs more than the blocked kernels save
// to the ops around the convolution. The output channels are blocked in every pass; the
// input channels only matter to backward_input, which writes them (a first layer's forward
// and filter gradient read a few-channel input in plain NCHW). (The pass itself may still
// run blocked: see pass_pds.)
bool wants_blocked(ConvPass pass, const ConvGeom& g) {
  if (g.o < 16) return false;
  return pass != ConvPass::backward_input || g.c >= 16;
}

// The descriptors of x and y as kiln stores them.
Mds stored_mds(bool bf16, const ConvGeom& g, const ConvLayouts& l) {
  Mds m = mds(bf16, g);
  const dt t = bf16 ? dt::bf16 : dt::f32;
  m.x = stored_desc({g.n, g.c, g.h, g.w}, t, l.x);
  m.y = stored_desc({g.n, g.o, g.oh, g.ow}, t, l.y);
  return m;
}

// The three primitive descriptors a pass may need: the forward (the backward passes take
// it as their hint) and the pass's own. bias: 0 none, 1 float32, 2 bfloat16 (the
// forward's epilogue bias, or backward_filter's bias gradient).
struct Pds {
  dnnl::convolution_forward::primitive_desc fwd;
  dnnl::convolution_backward_data::primitive_desc bd;
  dnnl::convolution_backward_weights::primitive_desc bw;
  dnnl::memory::desc bias;
};

// any_layout: oneDNN chooses the activations' layouts; else they are plain NCHW.
Pds pds(ConvPass pass, bool bf16, const ConvGeom& g, int bias, bool relu, bool any_layout) {
  const Mds m = any_layout ? mds(bf16, g, tag::any) : mds(bf16, g);
  Pds p;
  p.bias = bias_desc(bias, {g.o}, {1});  // a zero descriptor means no bias
  p.fwd = api::conv_forward_pd(engine(), m.x, m.w, p.bias, m.y, m.strides, m.pad_l, m.pad_r, epilogue_attr(relu));
  if (pass == ConvPass::backward_input)
    p.bd = api::conv_backward_data_pd(engine(), m.x, m.w, m.y, m.strides, m.pad_l, m.pad_r, p.fwd);
  if (pass == ConvPass::backward_filter)
    p.bw = api::conv_backward_weights_pd(engine(), m.x, m.w, p.bias, m.y, m.strides, m.pad_l, m.pad_r, p.fwd);
  return p;
}

// The chosen layouts of x and y in a pass.
std::pair<dnnl::memory::desc, dnnl::memory::desc> chosen_xy(ConvPass pass, const Pds& p) {
  if (pass == ConvPass::forward) return {p.fwd.src_desc(), p.fwd.dst_desc()};
  if (pass == ConvPass::backward_input) return {p.bd.diff_src_desc(), p.bd.diff_dst_desc()};
  return {p.bw.src_desc(), p.bw.diff_dst_desc()};
}

// Whether kiln's depthwise loops replace the pass oneDNN chose: a depthwise convolution
// for which oneDNN found no better than im2col + gemm or a reference loop (no jit_dw
// kernel for the shape), on plain layouts (which such kernels choose). In bfloat16 the
// loops run on float32 copies (bf16_fallback.h).
bool takes_loops(ConvPass pass, const ConvPrim& c, const std::string& impl, bool bf16, const ConvGeom& g, int bias) {
  if (!depthwise(g) || (!bf16 && bias == 2)) return false;  // the loops take a float32 bias
  if (impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos) return false;
  const Mds m = mds(bf16, g);
  const dnnl::memory::desc want[3][3] = {{m.x, m.w, m.y}, {m.y, m.w, m.x}, {m.x, m.y, m.w}};  // in[0], in[1], out
  const auto& w = want[static_cast<int>(pass)];
  return c.in[0].chosen == w[0] && c.in[1].chosen == w[1] && c.out.chosen == w[2];
}

const char* impl_of(ConvPass pass, const Pds& p) {
  return pass == ConvPass::forward          ? p.fwd.impl_info_str()
         : pass == ConvPass::backward_input ? p.bd.impl_info_str()
                                            : p.bw.impl_info_str();
}

// The pass on kiln's plain few-channel activations, or, where oneDNN has only im2col + gemm
// for those and a direct kernel (jit, or oneDNN 3's brgconv; not gemm, not a reference
// loop) on blocked ones, on blocked copies: a first layer's
// forward and filter gradient (1 input channel, 10 output channels: 3x and 6x faster on
// AVX-512 including the reorders) and the input gradient of a layer with 10 input
// channels. Depthwise passes keep their own fallback (takes_loops).
Pds pass_pds(ConvPass pass, bool bf16, const ConvGeom& g, int bias, bool relu) {
  const bool stored_blocked = wants_blocked(pass, g);
  Pds p = pds(pass, bf16, g, bias, relu, stored_blocked);
  if (stored_blocked || depthwise(g) || std::string(impl_of(pass, p)).find("gemm") == std::string::npos) return p;
  Pds blocked = pds(pass, bf16, g, bias, relu, true);
  const std::string impl = impl_of(pass, blocked);
  const bool direct = impl.find("gemm") == std::string::npos && impl.find("ref") == std::string::npos;
  return direct ? blocked : p;
}

// bias: as for pds. relu: the forward's epilogue.
ConvPrim make(ConvPass pass, bool bf16, const ConvGeom& g, int bias, bool relu, const ConvLayouts& l) {
  const Mds s = stored_mds(bf16, g, l);
  const Pds p = pass_pds(pass, bf16, g, bias, relu);
  ConvPrim c;
  if (pass == ConvPass::forward) {
    c = {dnnl::convolution_forward(p.fwd),
         {arg(DNNL_ARG_SRC, s.x, p.fwd.src_desc(), false), arg(DNNL_ARG_WEIGHTS, s.w, p.fwd.weights_desc(), false)},
         arg(DNNL_ARG_DST, s.y, p.fwd.dst_desc(), true),
         p.bias};
  } else if (pass == ConvPass::backward_input) {
    c = {dnnl::convolution_backward_data(p.bd),
         {arg(DNNL_ARG_DIFF_DST, s.y, p.bd.diff_dst_desc(), false),
          arg(DNNL_ARG_WEIGHTS, s.w, p.bd.weights_desc(), false)},
         arg(DNNL_ARG_DIFF_SRC, s.x, p.bd.diff_src_desc(), true),
         {}};
  } else {
    c = {dnnl::convolution_backward_weights(p.bw),
         {arg(DNNL_ARG_SRC, s.x, p.bw.src_desc(), false), arg(DNNL_ARG_DIFF_DST, s.y, p.bw.diff_dst_desc(), false)},
         arg(DNNL_ARG_DIFF_WEIGHTS, s.w, p.bw.diff_weights_desc(), true),
         p.bias};
  }
  c.loops = takes_loops(pass, c, impl_of(pass, p), bf16, g, bias);
  return c;
}

std::atomic<int64_t> reordered_activations{0};

// A growable, 64-byte aligned buffer for one reordered argument. Per thread, so that
// executables running on several threads never share one.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      p_.reset(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      if (!p_) throw std::bad_alloc();
      size_ = bytes;
    }
    return p_.get();
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> p_;
  size_t size_ = 0;
};

}  // namespace

void conv2d(ConvPass pass, bool bf16, const void* a, const void* b, void* out, const ConvGeom& g, const Epilogue& e,
            const ConvLayouts& l, const BiasGradient& db) {
  if (bf16 && !has_bf16_kernels()) return widened_conv2d_bf16(pass, a, b, out, g, e, l, db);
  static std::mutex mu;
  static std::map<std::pair<GeomKey, std::pair<int, int>>, ConvPrim> cache;
  thread_local Scratch scratch[3];
  KILN_CHECK(pass == ConvPass::forward || (!e.bias && !e.relu)) << "only the forward convolution has an epilogue";
  KILN_CHECK(!e.addend) << "a convolution takes no addend";
  KILN_CHECK(pass == ConvPass::backward_filter || !db.out) << "only backward_filter computes the bias gradient";
  const int bias = pass == ConvPass::backward_filter ? (db.out ? (db.bf16 ? 2 : 1) : 0) : bias_code(e);
  guarded("convolution", [&] {
    const int which = static_cast<int>(pass) + 4 * bias + 16 * e.relu;
    ConvPrim& p = cached(std::make_pair(key_of(which, bf16, g), std::make_pair(l.x, l.y)), cache, mu,
                         [&] { return make(pass, bf16, g, bias, e.relu, l); });
    if (p.loops && bf16) return widened_conv2d_bf16(pass, a, b, out, g, e, l, db);
    dnnl::stream s(engine());
    std::unordered_map<int, dnnl::memory> args;
    const void* ins[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
      const Arg& x = p.in[i];
      dnnl::memory user = mem(x.stored, ins[i]);
      if (!x.reorder) {
        args.emplace(x.id, user);
        continue;
      }
      dnnl::memory chosen = mem(x.chosen, scratch[i].get(x.chosen.get_size()));
      x.reorder->execute(s, user, chosen);
      if (x.counted) ++reordered_activations;
      args.emplace(x.id, chosen);
    }
    dnnl::memory user_out = mem(p.out.stored, out);
    dnnl::memory chosen_out = p.out.reorder ? mem(p.out.chosen, scratch[2].get(p.out.chosen.get_size())) : user_out;
    args.emplace(p.out.id, chosen_out);
    if (bias && pass == ConvPass::forward) args.emplace(DNNL_ARG_BIAS, mem(p.bias, e.bias));
    if (bias && pass == ConvPass::backward_filter) args.emplace(DNNL_ARG_DIFF_BIAS, mem(p.bias, db.out));
    if (p.loops) {
      auto at = [&](int id) { return static_cast<float*>(args.at(id).get_data_handle()); };
      const bool fwd = pass == ConvPass::forward;
      depthwise_loops(pass, at(p.in[0].id), at(p.in[1].id), at(p.out.id), g,
                      fwd && bias ? static_cast<const float*>(e.bias) : nullptr, e.relu,
                      !fwd && bias ? static_cast<float*>(db.out) : nullptr);
    } else {
      p.prim.execute(s, args);
    }
    if (p.out.reorder) {
      p.out.reorder->execute(s, chosen_out, user_out);
      if (p.out.counted) ++reordered_activations;
    }
    s.wait();
  });
}

int64_t blocked_activation_reorders() { return reordered_activations.load(); }

std::string conv_kernel(ConvPass pass, bool bf16, const ConvGeom& g) {
  if (bf16 && !has_bf16_kernels()) return "float32 copies (no bfloat16 kernels)";
  std::string out;
  guarded("convolution kernel query", [&] {
    const Pds p = pass_pds(pass, bf16, g, 0, false);
    const auto [x, y] = chosen_xy(pass, p);
    out = impl_of(pass, p);
    if (block_of(x) > 0 || block_of(y) > 0 || x != mds(bf16, g).x || y != mds(bf16, g).y) out += " on blocked layouts";
  });
  return out;
}

namespace {
std::mutex chooser_mu;
std::function<ConvLayouts(ConvPass, bool, const ConvGeom&)> chooser;  // set_layout_chooser_for_tests
}  // namespace

void set_layout_chooser_for_tests(std::function<ConvLayouts(ConvPass, bool, const ConvGeom&)> c) {
  std::lock_guard<std::mutex> lock(chooser_mu);
  chooser = std::move(c);
}

ConvLayouts preferred_layouts(ConvPass pass, bool bf16, const ConvGeom& g) {
  {
    std::lock_guard<std::mutex> lock(chooser_mu);
    if (chooser) return chooser(pass, bf16, g);
  }
  // Without bfloat16 kernels products are widened (bf16_fallback.h): slower than float32
  // whatever the layout, so they stay plain.
  if (bf16 && !has_bf16_kernels()) return {};
  static std::mutex mu;
  static std::map<GeomKey, ConvLayouts> cache;
  ConvLayouts out;
  guarded("convolution layout query", [&] {
    out = cached(key_of(static_cast<int>(pass), bf16, g), cache, mu, [&] {
      const auto [x, y] = chosen_xy(pass, pds(pass, bf16, g, 0, false, wants_blocked(pass, g)));
      return ConvLayouts{std::max(block_of(x), 0), std::max(block_of(y), 0)};  // another layout: kept plain
    });
  });
  return out;
}

}  // namespace kiln::onednn
