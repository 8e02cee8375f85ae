// Pooling through oneDNN, on plain NCHW buffers: the pooling kernels are memory-bound
// and reordering to a blocked layout and back costs more than it saves.
#include "backend/onednn/geometry.h"

namespace kiln::onednn {
namespace {

struct PoolPrims {
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward bwd;
  dnnl::memory::desc workspace;
};

PoolPrims& pool_prims(PoolKind kind, bool bf16, const ConvGeom& g) {
  static std::mutex mu;
  static std::map<GeomKey, PoolPrims> cache;
  return cached(key_of(static_cast<int>(kind), bf16, g), cache, mu, [&] {
    const Mds m = mds(bf16, g);
    const auto alg = kind == PoolKind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
    const dnnl::memory::dims kernel{g.kh, g.kw};
    dnnl::pooling_forward::primitive_desc fpd(
        {dnnl::prop_kind::forward_training, alg, m.x, m.y, m.strides, kernel, m.pad_l, m.pad_r}, engine());
    dnnl::pooling_backward::primitive_desc bpd({alg, m.x, m.y, m.strides, kernel, m.pad_l, m.pad_r}, engine(), fpd);
    return PoolPrims{dnnl::pooling_forward(fpd), dnnl::pooling_backward(bpd), fpd.workspace_desc()};
  });
}

}  // namespace

int64_t pool2d_workspace_bytes(PoolKind kind, bool bf16, const ConvGeom& g) {
  int64_t bytes = 0;
  guarded("pooling", [&] { bytes = static_cast<int64_t>(pool_prims(kind, bf16, g).workspace.get_size()); });
  return bytes;
}

void pool2d(PoolKind kind, bool bf16, const void* x, void* y, const ConvGeom& g, void* workspace) {
  guarded("pooling", [&] {
    const Mds m = mds(bf16, g);
    PoolPrims& p = pool_prims(kind, bf16, g);
    dnnl::stream s(engine());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, mem(m.x, x)}, {DNNL_ARG_DST, mem(m.y, y)}};
    if (p.workspace.get_size())
      args.emplace(DNNL_ARG_WORKSPACE, workspace ? mem(p.workspace, workspace) : dnnl::memory(p.workspace, engine()));
    p.fwd.execute(s, args);
    s.wait();
  });
}

void pool2d_grad(PoolKind kind, bool bf16, const void* x, const void* dy, void* dx, const ConvGeom& g,
                 const void* workspace) {
  guarded("pooling gradient", [&] {
    const Mds m = mds(bf16, g);
    PoolPrims& p = pool_prims(kind, bf16, g);
    dnnl::stream s(engine());
    std::unordered_map<int, dnnl::memory> bargs{{DNNL_ARG_DIFF_DST, mem(m.y, dy)}, {DNNL_ARG_DIFF_SRC, mem(m.x, dx)}};
    if (p.workspace.get_size()) {
      // Max pooling's gradient needs the forward's record of where the maxima were: the
      // caller's, or one from running the forward again.
      if (workspace) {
        bargs.emplace(DNNL_ARG_WORKSPACE, mem(p.workspace, workspace));
      } else {
        dnnl::memory ws(p.workspace, engine());
        dnnl::memory y(m.y, engine());
        p.fwd.execute(s, {{DNNL_ARG_SRC, mem(m.x, x)}, {DNNL_ARG_DST, y}, {DNNL_ARG_WORKSPACE, ws}});
        bargs.emplace(DNNL_ARG_WORKSPACE, ws);
      }
    }
    p.bwd.execute(s, bargs);
    s.wait();
  });
}

}  // namespace kiln::onednn
