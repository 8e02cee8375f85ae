// The one table of kiln's primitive ops. Everything about an op that is not code lives
// here; its code pieces are found by its name: shape/dtype inference in src/ir/infer_*.cpp,
// the VJP `vjp_<name>` in src/autodiff/, the interpreter kernel `interp_<name>` in
// src/backend/interp/. Composite ops (softmax, log_softmax, cross-entropy, ...) are built
// from these in the builder, so they need no rules of their own.
//
// KILN_OP(name, arity, family, differentiable, fusible, precision)
//   arity      number of inputs; -1 = one or more (concat)
//   family     which inference rule applies (see OpFamily)
//   fusible    an elementwise/broadcast op that a fused loop can compute
//   precision  under a mixed-precision policy: Low = compute in the low type,
//              Follow = in the type of its inputs, Keep = always float32,
//              None = not a float computation (integers, sources, state)
#pragma once

#define KILN_OPS(X)                                             \
  X(placeholder, 0, Source, false, false, None)                 \
  X(variable, 0, Source, false, false, Keep)                    \
  X(constant, 0, Source, false, true, Follow)                   \
  X(cast, 1, Cast, true, true, None)                            \
  X(stop_gradient, 1, Unary, true, true, Follow)                \
  X(neg, 1, Unary, true, true, Follow)                          \
  X(abs, 1, Unary, true, true, Follow)                          \
  X(sign, 1, Unary, true, true, Follow)                         \
  X(exp, 1, Unary, true, true, Keep)                            \
  X(log, 1, Unary, true, true, Keep)                            \
  X(sqrt, 1, Unary, true, true, Keep)                           \
  X(rsqrt, 1, Unary, true, true, Keep)                          \
  X(tanh, 1, Unary, true, true, Follow)                         \
  X(sigmoid, 1, Unary, true, true, Follow)                      \
  X(relu, 1, Unary, true, true, Follow)                         \
  X(gelu, 1, Unary, true, true, Follow)                         \
  X(erf, 1, Unary, true, true, Keep)                            \
  X(add, 2, Binary, true, true, Follow)                         \
  X(sub, 2, Binary, true, true, Follow)                         \
  X(mul, 2, Binary, true, true, Follow)                         \
  X(div, 2, Binary, true, true, Follow)                         \
  X(maximum, 2, Binary, true, true, Follow)                     \
  X(minimum, 2, Binary, true, true, Follow)                     \
  X(pow, 2, Binary, true, true, Keep)                           \
  X(equal, 2, Compare, false, true, None)                       \
  X(not_equal, 2, Compare, false, true, None)                   \
  X(less, 2, Compare, false, true, None)                        \
  X(less_equal, 2, Compare, false, true, None)                  \
  X(greater, 2, Compare, false, true, None)                     \
  X(greater_equal, 2, Compare, false, true, None)               \
  X(select, 3, Select, true, true, Follow)                      \
  X(reduce_sum, 1, Reduce, true, false, Keep)                   \
  X(reduce_mean, 1, Reduce, true, false, Keep)                  \
  X(reduce_max, 1, Reduce, true, false, Follow)                 \
  X(reshape, 1, Reshape, true, false, Follow)                   \
  X(transpose, 1, Transpose, true, false, Follow)               \
  X(broadcast_to, 1, BroadcastTo, true, true, Follow)           \
  X(slice, 1, Slice, true, false, Follow)                       \
  X(pad, 1, Pad, true, false, Follow)                           \
  X(concat, -1, Concat, true, false, Follow)                    \
  X(matmul, 2, MatMul, true, false, Low)                        \
  X(conv2d, 2, Conv2D, true, false, Low)                        \
  X(conv2d_backward_input, 2, Conv2DBackwardInput, false, false, Low)   \
  X(conv2d_backward_filter, 2, Conv2DBackwardFilter, false, false, Low) \
  X(max_pool2d, 1, Pool2D, true, false, Follow)                 \
  X(max_pool2d_grad, 2, Pool2DGrad, false, false, Follow)       \
  X(avg_pool2d, 1, Pool2D, true, false, Follow)                 \
  X(avg_pool2d_grad, 1, AvgPool2DGrad, false, false, Follow)    \
  X(one_hot, 1, OneHot, false, false, None)                     \
  X(argmax, 1, ArgMax, false, false, None)                      \
  X(assign, 2, Assign, false, false, None)

#define KILN_OP_COUNT 51
