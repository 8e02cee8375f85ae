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
import os as _os

# As `kiln train` does (kiln/process.h): OpenMP threads spin long enough to stay awake
# between a step's kernels on quiet CPUs, and briefly beside other work so idle ones do not
# starve working ones. libgomp reads this when it loads, which importing kiln._core does
# (unless something loaded it before); a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if not any(k in _os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KILN_KEEP_OPENMP_WAIT")):
    from . import _openmp_wait

    _os.environ["GOMP_SPINCOUNT"] = str(_openmp_wait.choose_spins())
from . import _core  # noqa: E402

_core.tune_heap()
from . import distributed as _distributed  # noqa: E402

_distributed._install()  # under mpirun: an uncaught exception ends every rank, naming its own
from ._dtypes import (DType, as_dtype, bfloat16, bool, float16, float32, float64, int8, int16, int32,  # noqa: A004
                      int64, string, uint8, uint16)
from ._graph import (  # noqa: F401
    Dimension, Tensor, TensorShape, abs, add, argmax, argmin, cast, clip_by_value, concat, constant, convert_to_tensor,
    cos, divide, equal, erf, exp, expand_dims, get_default_graph, greater, greater_equal, identity, less, less_equal,
    log, matmul, maximum, minimum, multiply, negative, not_equal, ones, ones_like, one_hot, pad, pow, reduce_max,
    reduce_mean, reduce_min, reduce_sum, reshape, rsqrt, sigmoid, sign, slice, sqrt, square, squeeze, stop_gradient,
    subtract, tanh, transpose, truediv, where, zeros, zeros_like,
)
from ._array_ops import (  # noqa: F401
    add_n, boolean_mask, clip_by_average_norm, clip_by_global_norm, clip_by_norm, cond, count_nonzero, expm1, fill,
    ensure_shape, gather, global_norm, log1p, logical_and, logical_not, logical_or, rank, reciprocal, reduce_all,
    reduce_any, reverse, shape, shape_n, size, split, squared_difference, stack, tile, unstack,
)
from ._array_ops import reverse as reverse_v2  # noqa: F401 (TensorFlow 1.x's second name of reverse)
from ._array_ops import range_ as range  # noqa: A001 (TensorFlow's name)
from ._scopes import (  # noqa: F401
    AUTO_REUSE, GraphKeys, add_to_collection, add_to_collections, colocate_with, control_dependencies, device,
    get_collection, get_collection_ref, get_variable_scope, group, name_scope, no_op, variable_scope,
)
from ._scopes import tuple_ as tuple  # noqa: A001
from ._variables import (  # noqa: F401
    Variable, all_variables, assign, assign_add, assign_sub, get_variable, global_variables,
    global_variables_initializer, local_variables, local_variables_initializer, model_variables,
    moving_average_variables, trainable_variables, variables_initializer,
)
from .random_ops import random_normal, random_uniform, set_random_seed, truncated_normal  # noqa: F401
from ._log import set_log_function
from . import data, distributed, estimator, initializers, layers, logging, losses, metrics, nn, train  # noqa: E402
from . import app, compat, contrib, feature_column, flags, gfile, keras, nest  # noqa: E402,F401
from .config import ExperimentalConfig, NPURunConfig, RunConfig
from .estimator import Estimator, EstimatorSpec, ModeKeys, NPUEstimator
from .train import TellMeStepOrLossHook
from .data import TensorSpec  # noqa: F401 (tf.TensorSpec, for from_generator(output_signature=))
from ._compat import (  # noqa: E402,F401
    GPUOptions, GraphOptions, OptimizerOptions, RewriterConfig, assert_equal, assert_rank, assert_type,
    disable_eager_execution, disable_v2_behavior, enable_eager_execution, executing_eagerly, gradients, io,
    is_tensor, math, python_io, random, test, variance_scaling_initializer, truncated_normal_initializer,
    glorot_uniform_initializer, glorot_normal_initializer, zeros_initializer, ones_initializer,
    constant_initializer, random_normal_initializer, random_uniform_initializer, image, summary, uniform_unit_scaling_initializer,
    sparse, to_bfloat16, to_double, to_float, to_int32, to_int64,
)
from .parsing import (  # noqa: E402,F401 (TensorFlow 1.x's top-level names)
    FixedLenFeature, FixedLenSequenceFeature, SparseTensorValue, VarLenFeature, decode_raw, parse_example,
    parse_single_example,
)
from .parsing import sparse_to_dense as sparse_tensor_to_dense  # noqa: E402,F401
from .image import random_crop  # noqa: E402,F401 (tf.random_crop)

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


def placeholder(*args, **kwargs):
    from ._graph import unsupported
    unsupported("placeholder", "the Estimator feeds features and labels to model_fn; input comes from input_fn")


def Session(*args, **kwargs):  # noqa: N802 (TensorFlow's name)
    from ._graph import unsupported
    unsupported("Session", "kiln runs graphs through the Estimator: train, evaluate, predict")




class _Options:
    """A protobuf-like message of session options: any field may be set (and read back); kiln
    ignores them (RunConfig(session_config=...) warns)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Options()
        self.__dict__[name] = value
        return value

    def CopyFrom(self, other):  # noqa: N802 (protobuf's name)
        self.__dict__.update(other.__dict__)

    def add(self, **kwargs):
        return _Options(**kwargs)


class ConfigProto(_Options):
    """tf.ConfigProto, accepted so that scripts' session_config lines run (gpu_options.
    allow_growth, graph_options.rewrite_options, ...); kiln ignores it (RunConfig warns)."""


class RunOptions(_Options):
    pass


__version__ = "0.1.0"
