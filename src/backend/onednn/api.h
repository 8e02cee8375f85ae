// The oneDNN calls whose spelling changed between oneDNN 2 (Debian 12's 2.6, the default)
// and oneDNN 3 (the PyPI wheels; cmake -DKILN_ONEDNN_ROOT=<prefix>): primitive
// descriptors built from the engine and the memory descriptors in 3, from an op
// descriptor in 2; post-ops without a scale; descriptors' dims through getters. Everything
// else kiln calls is spelled the same in both.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

namespace kiln::onednn::api {

using md = dnnl::memory::desc;

inline dnnl::memory::dims dims_of(const md& d) {
#if DNNL_VERSION_MAJOR >= 3
  return d.get_dims();
#else
  return d.dims();
#endif
}

inline dnnl::memory::data_type type_of(const md& d) {
#if DNNL_VERSION_MAJOR >= 3
  return d.get_data_type();
#else
  return d.data_type();
#endif
}

inline void append_relu(dnnl::post_ops& ops) {
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
#else
  ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
#endif
}

inline dnnl::matmul::primitive_desc matmul_pd(const dnnl::engine& e, const md& a, const md& b, const md& bias,
                                              const md& c, const dnnl::primitive_attr& attr = {}) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul::primitive_desc(e, a, b, bias, c, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, c), attr, e);
#endif
}

using dims = dnnl::memory::dims;

inline dnnl::convolution_forward::primitive_desc conv_forward_pd(const dnnl::engine& e, const md& x, const md& w,
                                                                 const md& bias, const md& y, const dims& strides,
                                                                 const dims& pad_l, const dims& pad_r,
                                                                 const dnnl::primitive_attr& attr) {
  const auto alg = dnnl::algorithm::convolution_direct;
  const auto kind = dnnl::prop_kind::forward_training;
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_forward::primitive_desc(e, kind, alg, x, w, bias, y, strides, pad_l, pad_r, attr);
#else
  return dnnl::convolution_forward::primitive_desc({kind, alg, x, w, bias, y, strides, pad_l, pad_r}, attr, e);
#endif
}

inline dnnl::convolution_backward_data::primitive_desc conv_backward_data_pd(
    const dnnl::engine& e, const md& dx, const md& w, const md& dy, const dims& strides, const dims& pad_l,
    const dims& pad_r, const dnnl::convolution_forward::primitive_desc& hint) {
  const auto alg = dnnl::algorithm::convolution_direct;
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_backward_data::primitive_desc(e, alg, dx, w, dy, strides, pad_l, pad_r, hint);
#else
  return dnnl::convolution_backward_data::primitive_desc({alg, dx, w, dy, strides, pad_l, pad_r}, e, hint);
#endif
}

inline dnnl::convolution_backward_weights::primitive_desc conv_backward_weights_pd(
    const dnnl::engine& e, const md& x, const md& dw, const md& dbias, const md& dy, const dims& strides,
    const dims& pad_l, const dims& pad_r, const dnnl::convolution_forward::primitive_desc& hint) {
  const auto alg = dnnl::algorithm::convolution_direct;
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_backward_weights::primitive_desc(e, alg, x, dw, dbias, dy, strides, pad_l, pad_r, hint);
#else
  return dnnl::convolution_backward_weights::primitive_desc({alg, x, dw, dbias, dy, strides, pad_l, pad_r}, e, hint);
#endif
}

}  // namespace kiln::onednn::api
