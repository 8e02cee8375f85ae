// The oneDNN descriptions of a kiln ConvGeom, and the primitive cache convolution uses.
#pragma once
#include <map>
#include <mutex>
#include <tuple>

#include "backend/onednn/engine.h"
#include "backend/onednn/onednn.h"

namespace kiln::onednn {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

using GeomKey = std::tuple<int, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t, int64_t>;

inline GeomKey key_of(int which, bool bf16, const ConvGeom& g) {
  return {which, bf16, g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.groups};
}

// x [n,c,h,w], w [o,c,kh,kw], y [n,o,oh,ow] in kiln's plain layouts, or in whatever layout
// oneDNN prefers when `fmt` is tag::any. A grouped filter [o, c/groups, kh, kw] is oneDNN's
// [groups, o/groups, c/groups, kh, kw] (goihw: the same bytes).
struct Mds {
  dnnl::memory::desc x, w, y;
  dnnl::memory::dims strides, pad_l, pad_r;
};

inline Mds mds(bool bf16, const ConvGeom& g, tag fmt = tag::undef) {
  const dt t = bf16 ? dt::bf16 : dt::f32;
  const bool grouped = g.groups > 1;
  const tag act = fmt == tag::undef ? tag::nchw : fmt;
  const tag wei = fmt == tag::undef ? (grouped ? tag::goihw : tag::oihw) : fmt;
  const dnnl::memory::dims w = grouped ? dnnl::memory::dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw}
                                       : dnnl::memory::dims{g.o, g.c, g.kh, g.kw};
  // Padding on the far side so that oneDNN's output size equals ours (floor division).
  return {dnnl::memory::desc({g.n, g.c, g.h, g.w}, t, act), dnnl::memory::desc(w, t, wei),
          dnnl::memory::desc({g.n, g.o, g.oh, g.ow}, t, act), {g.sh, g.sw}, {g.ph, g.pw},
          {g.far_ph(), g.far_pw()}};
}

inline dnnl::memory mem(const dnnl::memory::desc& d, const void* p) {
  return dnnl::memory(d, engine(), const_cast<void*>(p));
}

// The cached value for `key`, made by `make()` on first use: creating a primitive costs
// far more than running it.
template <class K, class T, class Make>
T& cached(const K& key, std::map<K, T>& cache, std::mutex& mu, Make make) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make()).first;
  return it->second;
}

}  // namespace kiln::onednn
