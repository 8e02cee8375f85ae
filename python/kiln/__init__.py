"""kiln: a graph compiler and training runtime for CPUs, with TensorFlow 1.x's names.

A TensorFlow 1.x Estimator script ports by renaming `tf.` to `kiln.` (and the seed's
`npu_bridge` to `kiln.npu_bridge`):

    import kiln
    def model_fn(features, labels, mode, params):
        h = kiln.layers.dense(features, 1024, activation=kiln.nn.relu)
        logits = kiln.layers.dense(h, 10)
        ...
        return kiln.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    est = kiln.NPUEstimator(model_fn=model_fn, config=kiln.NPURunConfig(...), params={})
    est.train(input_fn=..., max_steps=1200, hooks=[kiln.TellMeStepOrLossHook(step='global_step:0', total_step=1200)])

Names TensorFlow has and kiln's IR lacks raise NotImplementedError naming them.
"""
# ruff: noqa: F401, A004, E402
# (the top-level names, imported to be re-exported, some of them TensorFlow's that shadow
# builtins: abs, bool, pow, range, slice, tuple; kiln._core loads after the OpenMP wait is set)
import os as _os
import sys as _sys

try:
    import numpy as _numpy
except ImportError as _missing:
    raise ImportError("kiln needs numpy in the Python that imports it (%s): install it there (pip install "
                      "numpy), or run Debian's /usr/bin/python3, which scripts/install-deps gives python3-numpy"
                      % _sys.executable) from _missing

# As `kiln train` does (kiln/process/process.h): OpenMP threads spin long enough to stay awake
# between a step's kernels on quiet CPUs, and briefly beside other work so idle ones do not
# starve working ones. libgomp reads this when it loads, which importing kiln._core does
# (unless something loaded it before); a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if not any(k in _os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KILN_KEEP_OPENMP_WAIT")):
    from kiln._src import openmp_wait as _openmp_wait

    _os.environ["GOMP_SPINCOUNT"] = str(_openmp_wait.choose_spins())
from kiln import _core

if int(_numpy.__version__.split(".")[0]) >= 2 and tuple(_core.PYBIND11_VERSION) < (2, 12):
    # Its arrays would be read with numpy 1's layout: silently wrong values, not an error.
    raise ImportError("kiln._core was built with pybind11 %d.%d, which reads numpy 1.x arrays only, and this Python "
                      "(%s) has numpy %s: install numpy 1.x there (pip install 'numpy<2'), or rebuild kiln with "
                      "pybind11 >= 2.12" % (tuple(_core.PYBIND11_VERSION) + (_sys.executable, _numpy.__version__)))
_core.tune_heap()
from kiln._src import distributed as _distributed

_distributed._install()  # under mpirun: an uncaught exception ends every rank, naming its own
from kiln import (
    app,
    compat,
    config,
    contrib,
    data,
    distributed,
    errors,
    estimator,
    example_proto,
    feature_column,
    flags,
    gfile,
    image,
    initializers,
    io,
    keras,
    layers,
    logging,
    losses,
    math,
    metrics,
    nest,
    nn,
    parsing,
    python_io,
    random,
    random_ops,
    records,
    sparse,
    summary,
    test,
    train,
)
from kiln._src.array_ops import (
    add_n,
    boolean_mask,
    clip_by_average_norm,
    clip_by_global_norm,
    clip_by_norm,
    cond,
    count_nonzero,
    ensure_shape,
    expm1,
    fill,
    gather,
    global_norm,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    rank,
    reciprocal,
    reduce_all,
    reduce_any,
    reverse,
    shape,
    shape_n,
    size,
    split,
    squared_difference,
    stack,
    tile,
    unstack,
)
from kiln._src.array_ops import range_ as range
from kiln._src.array_ops import reverse as reverse_v2
from kiln._src.compat import (
    assert_equal,
    assert_rank,
    assert_type,
    constant_initializer,
    disable_eager_execution,
    disable_v2_behavior,
    enable_eager_execution,
    executing_eagerly,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    gradients,
    is_tensor,
    ones_initializer,
    random_normal_initializer,
    random_uniform_initializer,
    to_bfloat16,
    to_double,
    to_float,
    to_int32,
    to_int64,
    truncated_normal_initializer,
    uniform_unit_scaling_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from kiln._src.dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
)
from kiln._src.graph import (
    Dimension,
    Graph,
    Tensor,
    TensorShape,
    abs,
    add,
    arg_max,
    arg_min,
    argmax,
    argmin,
    cast,
    clip_by_value,
    concat,
    constant,
    convert_to_tensor,
    cos,
    divide,
    equal,
    erf,
    exp,
    expand_dims,
    get_default_graph,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    one_hot,
    ones,
    ones_like,
    pad,
    placeholder,
    placeholder_with_default,
    pow,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_sum,
    reset_default_graph,
    reshape,
    rsqrt,
    sigmoid,
    sign,
    slice,
    sqrt,
    square,
    squeeze,
    stop_gradient,
    subtract,
    tanh,
    transpose,
    truediv,
    where,
    zeros,
    zeros_like,
)
from kiln._src.image import random_crop
from kiln._src.log import set_log_function
from kiln._src.parsing import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseTensorValue,
    VarLenFeature,
    decode_raw,
    parse_example,
    parse_single_example,
)
from kiln._src.parsing import sparse_to_dense as sparse_tensor_to_dense
from kiln._src.random_ops import random_normal, random_uniform, set_random_seed, truncated_normal
from kiln._src.scopes import (
    AUTO_REUSE,
    GraphKeys,
    add_to_collection,
    add_to_collections,
    colocate_with,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_variable_scope,
    group,
    name_scope,
    no_op,
    variable_scope,
)
from kiln._src.scopes import tuple_ as tuple
from kiln._src.session import InteractiveSession, Session, get_default_session
from kiln._src.session_config import (
    AttrValue,
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RewriterConfig,
    RunOptions,
)
from kiln._src.unsupported import unsupported as _unsupported
from kiln._src.variables import (
    Variable,
    all_variables,
    assign,
    assign_add,
    assign_sub,
    get_variable,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    initialize_local_variables,
    initialize_variables,
    local_variables,
    local_variables_initializer,
    model_variables,
    moving_average_variables,
    tables_initializer,
    trainable_variables,
    variables_initializer,
)
from kiln.config import ExperimentalConfig, NPURunConfig, RunConfig
from kiln.data import TensorSpec
from kiln.estimator import Estimator, EstimatorSpec, ModeKeys, NPUEstimator
from kiln.train import TellMeStepOrLossHook

# Errors: configuration and graph errors are ValueErrors whose message starts with the
# option in brackets ("[accelerate_train_mode] ..."), also in `error.option`.
Error = _core.Error
ConfigError = _core.ConfigError
GraphError = _core.GraphError
DataError = _core.DataError
CheckpointError = _core.CheckpointError
NanLossError = _core.NanLossError


def _option(e):
    text = str(e)
    return text[1:text.index("]")] if text.startswith("[") and "]" in text else None


for _cls in (ConfigError, GraphError, DataError, CheckpointError, NanLossError, Error):
    _cls.option = property(_option)
del _cls


__version__ = "0.1.0"
