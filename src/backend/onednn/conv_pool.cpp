// Convolution and pooling through oneDNN, on plain NCHW/OIHW buffers. Primitives are
// cached by geometry: creating one costs far more than running it.
#include <map>
#include <mutex>
#include <tuple>

#include "backend/onednn/engine.h"
#include "backend/onednn/onednn.h"

namespace kiln::onednn {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using Key = std::tuple<int, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t>;

Key key_of(int which, bool bf16, const ConvGeom& g) {
  return {which, bf16, g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw};
}

struct Mds {
  dnnl::memory::desc x, w, y;
  dnnl::memory::dims strides, pad;
};

Mds mds(bool bf16, const ConvGeom& g) {
  const dt t = bf16 ? dt::bf16 : dt::f32;
  return {dnnl::memory::desc({g.n, g.c, g.h, g.w}, t, tag::nchw), dnnl::memory::desc({g.o, g.c, g.kh, g.kw}, t, tag::oihw),
          dnnl::memory::desc({g.n, g.o, g.oh, g.ow}, t, tag::nchw), {g.sh, g.sw}, {g.ph, g.pw}};
}

// Padding on the far side so that oneDNN's output size equals ours (floor division).
dnnl::memory::dims pad_r(const ConvGeom& g) {
  return {(g.oh - 1) * g.sh + g.kh - g.h - g.ph, (g.ow - 1) * g.sw + g.kw - g.w - g.pw};
}

template <class T>
T& cached(const Key& key, std::map<Key, T>& cache, std::mutex& mu, auto make) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make()).first;
  return it->second;
}

dnnl::convolution_forward::primitive_desc conv_fwd_pd(bool bf16, const ConvGeom& g) {
  const Mds m = mds(bf16, g);
  return {{dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, m.x, m.w, m.y, m.strides, m.pad,
           pad_r(g)},
          engine()};
}

dnnl::memory mem(const dnnl::memory::desc& d, const void* p) { return dnnl::memory(d, engine(), const_cast<void*>(p)); }

}  // namespace

void conv2d(ConvPass pass, bool bf16, const void* a, const void* b, void* out, const ConvGeom& g) {
  static std::mutex mu;
  static std::map<Key, dnnl::primitive> cache;
  guarded("convolution", [&] {
    const Mds m = mds(bf16, g);
    dnnl::primitive& p = cached(key_of(static_cast<int>(pass), bf16, g), cache, mu, [&]() -> dnnl::primitive {
      const auto fwd = conv_fwd_pd(bf16, g);
      if (pass == ConvPass::forward) return dnnl::convolution_forward(fwd);
      if (pass == ConvPass::backward_input)
        return dnnl::convolution_backward_data(dnnl::convolution_backward_data::primitive_desc(
            {dnnl::algorithm::convolution_direct, m.x, m.w, m.y, m.strides, m.pad, pad_r(g)}, engine(), fwd));
      return dnnl::convolution_backward_weights(dnnl::convolution_backward_weights::primitive_desc(
          {dnnl::algorithm::convolution_direct, m.x, m.w, m.y, m.strides, m.pad, pad_r(g)}, engine(), fwd));
    });
    dnnl::stream s(engine());
    if (pass == ConvPass::forward)
      p.execute(s, {{DNNL_ARG_SRC, mem(m.x, a)}, {DNNL_ARG_WEIGHTS, mem(m.w, b)}, {DNNL_ARG_DST, mem(m.y, out)}});
    else if (pass == ConvPass::backward_input)
      p.execute(s, {{DNNL_ARG_DIFF_DST, mem(m.y, a)}, {DNNL_ARG_WEIGHTS, mem(m.w, b)}, {DNNL_ARG_DIFF_SRC, mem(m.x, out)}});
    else
      p.execute(s, {{DNNL_ARG_SRC, mem(m.x, a)}, {DNNL_ARG_DIFF_DST, mem(m.y, b)}, {DNNL_ARG_DIFF_WEIGHTS, mem(m.w, out)}});
    s.wait();
  });
}

namespace {

struct PoolPrims {
  dnnl::pooling_forward::primitive_desc fwd_pd;
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward bwd;
  dnnl::memory::desc workspace;
};

PoolPrims& pool_prims(PoolKind kind, bool bf16, const ConvGeom& g) {
  static std::mutex mu;
  static std::map<Key, PoolPrims> cache;
  return cached(key_of(static_cast<int>(kind), bf16, g), cache, mu, [&] {
    const Mds m = mds(bf16, g);
    const auto alg = kind == PoolKind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
    const dnnl::memory::dims kernel{g.kh, g.kw};
    dnnl::pooling_forward::primitive_desc fpd(
        {dnnl::prop_kind::forward_training, alg, m.x, m.y, m.strides, kernel, m.pad, pad_r(g)}, engine());
    dnnl::pooling_backward::primitive_desc bpd({alg, m.x, m.y, m.strides, kernel, m.pad, pad_r(g)}, engine(), fpd);
    return PoolPrims{fpd, dnnl::pooling_forward(fpd), dnnl::pooling_backward(bpd), fpd.workspace_desc()};
  });
}

}  // namespace

void pool2d(PoolKind kind, bool bf16, const void* x, void* y, const ConvGeom& g) {
  guarded("pooling", [&] {
    const Mds m = mds(bf16, g);
    PoolPrims& p = pool_prims(kind, bf16, g);
    dnnl::stream s(engine());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(m.x, x)}, {DNNL_ARG_DST, mem(m.y, y)}};
    if (p.workspace.get_size()) args.emplace(DNNL_ARG_WORKSPACE, dnnl::memory(p.workspace, engine()));
    p.fwd.execute(s, args);
    s.wait();
  });
}

void pool2d_grad(PoolKind kind, bool bf16, const void* x, const void* dy, void* dx, const ConvGeom& g) {
  guarded("pooling gradient", [&] {
    const Mds m = mds(bf16, g);
    PoolPrims& p = pool_prims(kind, bf16, g);
    dnnl::stream s(engine());
    std::unordered_map<int, dnnl::memory> bargs{{DNNL_ARG_DIFF_DST, mem(m.y, dy)}, {DNNL_ARG_DIFF_SRC, mem(m.x, dx)}};
    if (p.workspace.get_size()) {
      // Max pooling's gradient needs the forward's record of where the maxima were.
      dnnl::memory ws(p.workspace, engine());
      dnnl::memory y(m.y, engine());
      p.fwd.execute(s, {{DNNL_ARG_SRC, mem(m.x, x)}, {DNNL_ARG_DST, y}, {DNNL_ARG_WORKSPACE, ws}});
      bargs.emplace(DNNL_ARG_WORKSPACE, ws);
    }
    p.bwd.execute(s, bargs);
    s.wait();
  });
}

}  // namespace kiln::onednn
