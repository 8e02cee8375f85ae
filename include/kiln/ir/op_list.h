// The one table of kiln's primitive ops. Everything about an op that is not code lives
// here; its code pieces are found by its name, or follow from its family:
//   shape/dtype inference  one rule per family, src/ir/infer.cpp (convolution and pooling
//                          sizes from src/ir/conv_geometry.h, which every backend shares)
//   gradient               `vjp_<name>` in src/autodiff/vjp_*.cpp (KILN_NO_GRADIENT for the
//                          ops that have none)
//   interpreter            `interp_<name>` in src/backend/interp/
//   CPU backend            how it is computed (inline in a fused loop, a reduction kernel,
//                          a pooling loop nest, a oneDNN call, or the interpreter's kernel)
//                          follows from `fusible` and the family: src/backend/cpu/schedule/lowering.cpp;
//                          a fusible op's per-element C++ is `loop_<name>` in
//                          src/backend/cpu/codegen/loop_*.cpp (declared in loop_ops.h)
// A missing piece is a link error, not a runtime surprise. Composite ops (softmax,
// log_softmax, cross-entropy, ...) are built from these in the builder, so they need no
// rules of their own.
//
// X(name, arity, family, differentiable, fusible, precision, attributes)
//   arity      number of inputs; -1 = as many as the family's rule allows (concat: one or
//              more; dense: 2 to 4)
//   family     which inference rule applies (see OpFamily), and for ops that are not
//              fusible, which kind of CPU kernel computes them
//   differentiable  autodiff propagates gradients through it (grad.cpp)
//   fusible    a fused loop computes it element by element: elementwise and broadcast
//              ops, constants, and the index-mapping ops (reshape, transpose, slice, pad,
//              one_hot) whose output element reads one input element at a computed index
//   precision  under a mixed-precision policy (read by the cast-insertion pass,
//              src/passes/precision.cpp): Low = compute in the low type, Follow = in the
//              type of its inputs, Keep = always float32, None = not a float computation
//              (integers, sources, state)
//   attributes the attribute names the op takes, space-separated; a trailing '?' marks
//              an optional one. The verifier rejects missing and unknown attributes.
#pragma once

#define KILN_OPS(X)                                             \
  X(placeholder, 0, Source, false, false, None, "dtype shape")                                       \
  X(variable, 0, Source, false, false, Keep, "dtype shape init value? low? high? mean? stddev? scale? mode? distribution? layout? seed? local? trainable? data?") \
  X(constant, 0, Source, false, true, Follow, "dtype shape value runtime? data?")                          \
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
  X(cos, 1, Unary, true, true, Keep, "")                                                             \
  X(add, 2, Binary, true, true, Follow, "")                                                          \
  X(sub, 2, Binary, true, true, Follow, "")                                                          \
  X(mul, 2, Binary, true, true, Follow, "")                                                          \
  X(div, 2, Binary, true, true, Follow, "")                                                          \
  X(maximum, 2, Binary, true, true, Follow, "")                                                      \
  X(minimum, 2, Binary, true, true, Follow, "")                                                      \
  X(pow, 2, Binary, true, true, Keep, "")                                                            \
  X(gelu_grad, 2, Binary, true, true, Follow, "")                                                    \
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
  X(reshape, 1, Reshape, true, true, Follow, "shape")                                               \
  X(transpose, 1, Transpose, true, true, Follow, "perm")                                            \
  X(broadcast_to, 1, BroadcastTo, true, true, Follow, "shape")                                       \
  X(slice, 1, Slice, true, true, Follow, "begin end")                                               \
  X(pad, 1, Pad, true, true, Follow, "low high")                                                    \
  X(concat, -1, Concat, true, false, Follow, "axis")                                                 \
  X(matmul, 2, MatMul, true, false, Low, "transpose_a transpose_b")                                  \
  /* matmul + bias [n] + addend [m,n] (+ ReLU), rounded once: made by the epilogue pass after */     \
  /* autodiff; inputs a, b, then the bias unless bias=0, then the addend if addend=1 */             \
  X(dense, -1, Dense, false, false, Low, "transpose_a transpose_b relu bias? addend?")              \
  X(conv2d, 2, Conv2D, true, false, Low, "stride padding groups?")                                       \
  /* conv2d + per-channel bias (+ ReLU), rounded once: made by the epilogue pass */                 \
  X(conv2d_bias, 3, Conv2DBias, false, false, Low, "stride padding relu groups?")                        \
  X(conv2d_backward_input, 2, Conv2DBackwardInput, false, false, Low, "stride padding input_shape groups?")  \
  X(conv2d_backward_filter, 2, Conv2DBackwardFilter, false, false, Low, "stride padding filter_shape groups?") \
  X(max_pool2d, 1, Pool2D, true, false, Follow, "window stride padding")                             \
  X(max_pool2d_grad, 2, Pool2DGrad, false, false, Follow, "window stride padding positive?")         \
  X(avg_pool2d, 1, Pool2D, true, false, Follow, "window stride padding")                             \
  X(avg_pool2d_grad, 1, AvgPool2DGrad, false, false, Follow, "window stride padding input_shape")    \
  X(one_hot, 1, OneHot, false, true, None, "depth dtype strict?")                                           \
  /* one_hot {strict=1}: an index outside 0..depth-1 is an error of the input (a class id of    \
     sparse_softmax_cross_entropy), not a row of zeros; see ir/index_bounds.h */                   \
  /* rows of params [V, ...] picked by integer indices [...]: an embedding lookup */                \
  X(gather, 2, Gather, true, true, Follow, "lenient?")                                                   \
  /* gather's gradient: updates [..., D] summed into `rows` rows at their indices */                \
  X(scatter_add, 2, ScatterAdd, true, false, Follow, "rows")                                         \
  X(argmax, 1, ArgMax, false, false, None, "axis")                                                   \
  /* random(seed, step, rank): f32 draws of `distribution` (uniform [0,1), normal,            \
     truncated_normal) of shape `shape`, a pure function of the three i64 scalars, the stream  \
     and the element's index (src/ir/philox.h): reproducible, the same in every backend */     \
  X(random, 3, Random, false, true, Keep, "dtype shape distribution stream")                       \
  X(assign, 2, Assign, false, false, None, "")                                                       \
  /* the elementwise sum of the input over the ranks of a data-parallel job (src/dist/):          \
     inserted by minimize on each gradient when world_size > 1; world_size is checked at run */   \
  X(all_reduce, -1, Collective, false, false, Keep, "world_size")

#define KILN_OP_COUNT 59

// For X-macro users that need a piece only where a true/false column is true, e.g. a
// declaration for fusible ops only: KILN_OP_CHOOSE(fusible, <if true>, <if false>).
#define KILN_OP_CHOOSE(flag, if_true, if_false) KILN_OP_CHOOSE_##flag(if_true, if_false)
#define KILN_OP_CHOOSE_true(if_true, if_false) if_true
#define KILN_OP_CHOOSE_false(if_true, if_false) if_false
