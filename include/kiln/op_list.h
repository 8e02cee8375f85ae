// The one table of kiln's primitive ops. Everything about an op that is not code lives
// here; its code pieces are found by its name: shape/dtype inference in src/ir/infer_*.cpp,
// the VJP `vjp_<name>` in src/autodiff/, the interpreter kernel `interp_<name>` in
// src/backend/interp/. Composite ops (softmax, log_softmax, cross-entropy, ...) are built
// from these in the builder, so they need no rules of their own.
//
// X(name, arity, family, differentiable, fusible, precision, attributes)
//   arity      number of inputs; -1 = one or more (concat)
//   family     which inference rule applies (see OpFamily)
//   fusible    an elementwise/broadcast op that a fused loop can compute
//   precision  under a mixed-precision policy: Low = compute in the low type,
//              Follow = in the type of its inputs, Keep = always float32,
//              None = not a float computation (integers, sources, state)
//   attributes the attribute names the op takes, space-separated; a trailing '?' marks
//              an optional one. The verifier rejects missing and unknown attributes.
#pragma once

#define KILN_OPS(X)                                             \
  X(placeholder, 0, Source, false, false, None, "dtype shape")                                       \
  X(variable, 0, Source, false, false, Keep, "dtype shape init value? low? high? mean? stddev? seed?") \
  X(constant, 0, Source, false, true, Follow, "dtype shape value")                                   \
  X(cast, 1, Cast, true, true, None, "dtype")                                                        \
  X(stop_gradient, 1, Unary, true, true, Follow, "")                                                 \
  X(neg, 1, Unary, true, true, Follow, "")                                                           \
  X(abs, 1, Unary, true, true, Follow, "")                                                           \
  X(sign, 1, Unary, true, true, Follow, "")                                                          \
  X(exp, 1, Unary, true, true, Keep, "")                                                             \
  X(log, 1, Unary, true, true, Keep, "")                                                             \
  X(sqrt, 1, Unary, true, true, Keep, "")                                                            \
  X(rsqrt, 1, Unary, true, true, Keep, "")                                                           \
  X(tanh, 1, Unary, true, true, Follow, "")                                                          \
  X(sigmoid, 1, Unary, true, true, Follow, "")                                                       \
  X(relu, 1, Unary, true, true, Follow, "")                                                          \
  X(gelu, 1, Unary, true, true, Follow, "")                                                          \
  X(erf, 1, Unary, true, true, Keep, "")                                                             \
  X(add, 2, Binary, true, true, Follow, "")                                                          \
  X(sub, 2, Binary, true, true, Follow, "")                                                          \
  X(mul, 2, Binary, true, true, Follow, "")                                                          \
  X(div, 2, Binary, true, true, Follow, "")                                                          \
  X(maximum, 2, Binary, true, true, Follow, "")                                                      \
  X(minimum, 2, Binary, true, true, Follow, "")                                                      \
  X(pow, 2, Binary, true, true, Keep, "")                                                            \
  X(equal, 2, Compare, false, true, None, "")                                                        \
  X(not_equal, 2, Compare, false, true, None, "")                                                    \
  X(less, 2, Compare, false, true, None, "")                                                         \
  X(less_equal, 2, Compare, false, true, None, "")                                                   \
  X(greater, 2, Compare, false, true, None, "")                                                      \
  X(greater_equal, 2, Compare, false, true, None, "")                                                \
  X(select, 3, Select, true, true, Follow, "")                                                       \
  X(reduce_sum, 1, Reduce, true, false, Keep, "axes keepdims")                                       \
  X(reduce_mean, 1, Reduce, true, false, Keep, "axes keepdims")                                      \
  X(reduce_max, 1, Reduce, true, false, Follow, "axes keepdims")                                     \
  X(reshape, 1, Reshape, true, false, Follow, "shape")                                               \
  X(transpose, 1, Transpose, true, false, Follow, "perm")                                            \
  X(broadcast_to, 1, BroadcastTo, true, true, Follow, "shape")                                       \
  X(slice, 1, Slice, true, false, Follow, "begin end")                                               \
  X(pad, 1, Pad, true, false, Follow, "low high")                                                    \
  X(concat, -1, Concat, true, false, Follow, "axis")                                                 \
  X(matmul, 2, MatMul, true, false, Low, "transpose_a transpose_b")                                  \
  /* matmul + bias [n] (+ ReLU), rounded once: made by the epilogue pass after autodiff */           \
  X(dense, 3, Dense, false, false, Low, "transpose_a transpose_b relu")                             \
  X(conv2d, 2, Conv2D, true, false, Low, "stride padding")                                           \
  /* conv2d + per-channel bias (+ ReLU), rounded once: made by the epilogue pass */                 \
  X(conv2d_bias, 3, Conv2DBias, false, false, Low, "stride padding relu")                           \
  X(conv2d_backward_input, 2, Conv2DBackwardInput, false, false, Low, "stride padding input_shape")  \
  X(conv2d_backward_filter, 2, Conv2DBackwardFilter, false, false, Low, "stride padding filter_shape") \
  X(max_pool2d, 1, Pool2D, true, false, Follow, "window stride padding")                             \
  X(max_pool2d_grad, 2, Pool2DGrad, false, false, Follow, "window stride padding positive?")         \
  X(avg_pool2d, 1, Pool2D, true, false, Follow, "window stride padding")                             \
  X(avg_pool2d_grad, 1, AvgPool2DGrad, false, false, Follow, "window stride padding input_shape")    \
  X(one_hot, 1, OneHot, false, false, None, "depth dtype")                                           \
  X(argmax, 1, ArgMax, false, false, None, "axis")                                                   \
  X(assign, 2, Assign, false, false, None, "")

#define KILN_OP_COUNT 53
