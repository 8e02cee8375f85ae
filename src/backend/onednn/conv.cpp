// Convolution through oneDNN. kiln's buffers are plain NCHW/OIHW, but oneDNN's fast
// convolutions (jit:avx512_core, jit_bf16, brgconv) want channel-blocked layouts: on plain
// tensors it falls back to im2col + gemm, 2-6x slower. So each pass lets oneDNN choose
// its layouts (format_tag::any) and reorders the arguments whose chosen layout differs,
// through per-thread scratch buffers; the reorders cost a few percent of the convolution.
#include <cstdlib>
#include <memory>
#include <optional>

#include "backend/onednn/bf16_fallback.h"
#include "backend/onednn/geometry.h"
#include "backend/onednn/isa.h"
#include "kiln/error.h"

namespace kiln::onednn {
namespace {

// One argument of a pass: kiln's plain layout, the layout the primitive runs on, and the
// reorder between them when they differ (plain -> chosen for inputs, back for the output).
struct Arg {
  int id;
  dnnl::memory::desc plain, chosen;
  std::optional<dnnl::reorder> reorder;
};

struct ConvPrim {
  dnnl::primitive prim;
  Arg in[2], out;
  dnnl::memory::desc bias;  // forward with an epilogue's bias, else empty
};

Arg arg(int id, const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen, bool is_output) {
  Arg a{id, plain, chosen, std::nullopt};
  if (plain != chosen)
    a.reorder = is_output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), chosen, engine(), plain))
                          : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain, engine(), chosen));
  return a;
}

// Blocked layouts pad channels up to a multiple of 16: with fewer channels the padding
// costs more than the blocked kernels save. The output channels are blocked in every
// pass; the input channels only matter to backward_input, which writes them (a first
// layer's forward and filter gradient read a few-channel input in plain NCHW).
bool wants_blocked(ConvPass pass, const ConvGeom& g) {
  if (g.o < 16) return false;
  return pass != ConvPass::backward_input || g.c >= 16;
}

// bias: 0 none, 1 float32, 2 bfloat16 (forward only).
ConvPrim make(ConvPass pass, bool bf16, const ConvGeom& g, int bias, bool relu) {
  const Mds p = mds(bf16, g);
  const Mds m = wants_blocked(pass, g) ? mds(bf16, g, tag::any) : p;
  const auto alg = dnnl::algorithm::convolution_direct;
  // The backward passes take this forward as their hint; they never have an epilogue, and
  // a zero bias descriptor means no bias.
  const dnnl::memory::desc b = bias_desc(bias, {g.o}, {1});
  const dnnl::convolution_forward::primitive_desc fwd(
      {dnnl::prop_kind::forward_training, alg, m.x, m.w, b, m.y, m.strides, m.pad_l, m.pad_r}, epilogue_attr(relu),
      engine());
  if (pass == ConvPass::forward)
    return {dnnl::convolution_forward(fwd),
            {arg(DNNL_ARG_SRC, p.x, fwd.src_desc(), false), arg(DNNL_ARG_WEIGHTS, p.w, fwd.weights_desc(), false)},
            arg(DNNL_ARG_DST, p.y, fwd.dst_desc(), true),
            b};
  if (pass == ConvPass::backward_input) {
    const dnnl::convolution_backward_data::primitive_desc bd({alg, m.x, m.w, m.y, m.strides, m.pad_l, m.pad_r}, engine(), fwd);
    return {dnnl::convolution_backward_data(bd),
            {arg(DNNL_ARG_DIFF_DST, p.y, bd.diff_dst_desc(), false), arg(DNNL_ARG_WEIGHTS, p.w, bd.weights_desc(), false)},
            arg(DNNL_ARG_DIFF_SRC, p.x, bd.diff_src_desc(), true),
            {}};
  }
  const dnnl::convolution_backward_weights::primitive_desc bw({alg, m.x, m.w, m.y, m.strides, m.pad_l, m.pad_r}, engine(),
                                                              fwd);
  return {dnnl::convolution_backward_weights(bw),
          {arg(DNNL_ARG_SRC, p.x, bw.src_desc(), false), arg(DNNL_ARG_DIFF_DST, p.y, bw.diff_dst_desc(), false)},
          arg(DNNL_ARG_DIFF_WEIGHTS, p.w, bw.diff_weights_desc(), true),
          {}};
}

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

void conv2d(ConvPass pass, bool bf16, const void* a, const void* b, void* out, const ConvGeom& g, const Epilogue& e) {
  if (bf16 && !has_bf16_kernels()) return widened_conv2d_bf16(pass, a, b, out, g, e);
  static std::mutex mu;
  static std::map<GeomKey, ConvPrim> cache;
  thread_local Scratch scratch[3];
  KILN_CHECK(pass == ConvPass::forward || (!e.bias && !e.relu)) << "only the forward convolution has an epilogue";
  const int bias = bias_code(e);
  guarded("convolution", [&] {
    const int which = static_cast<int>(pass) + 4 * bias + 16 * e.relu;
    ConvPrim& p = cached(key_of(which, bf16, g), cache, mu, [&] { return make(pass, bf16, g, bias, e.relu); });
    dnnl::stream s(engine());
    std::unordered_map<int, dnnl::memory> args;
    const void* ins[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
      const Arg& x = p.in[i];
      dnnl::memory user = mem(x.plain, ins[i]);
      if (!x.reorder) {
        args.emplace(x.id, user);
        continue;
      }
      dnnl::memory chosen = mem(x.chosen, scratch[i].get(x.chosen.get_size()));
      x.reorder->execute(s, user, chosen);
      args.emplace(x.id, chosen);
    }
    dnnl::memory user_out = mem(p.out.plain, out);
    dnnl::memory chosen_out = p.out.reorder ? mem(p.out.chosen, scratch[2].get(p.out.chosen.get_size())) : user_out;
    args.emplace(p.out.id, chosen_out);
    if (bias) args.emplace(DNNL_ARG_BIAS, mem(p.bias, e.bias));
    p.prim.execute(s, args);
    if (p.out.reorder) p.out.reorder->execute(s, chosen_out, user_out);
    s.wait();
  });
}

}  // namespace kiln::onednn
