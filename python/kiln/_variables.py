"""Variables: kiln.get_variable and kiln.Variable-free TF code paths, and the step counter."""
from . import _core
from . import initializers as init
from ._dtypes import as_dtype, float32
from ._graph import current


def get_variable(name, shape=None, dtype=None, initializer=None, trainable=True, **unused):
    """A float variable named `name` ('scope/kernel'); created once per graph."""
    ctx = current("get_variable")
    if shape is None:
        raise ValueError("[get_variable] '%s' needs a shape (kiln's shapes are static)" % name)
    if not trainable:
        raise NotImplementedError("get_variable(trainable=False) is not provided by kiln: every float variable trains")
    i = init.as_initializer(initializer, init.glorot_uniform())
    seed = i.seed if i.seed is not None else ctx.next_seed()
    dtype = as_dtype(dtype) if dtype is not None else float32
    existing = ctx.scope.find(name)
    if existing is not None:
        raise ValueError("[get_variable] '%s' already exists in this graph; variable names are unique" % name)
    # TensorFlow's kernels are [..., in, out] (HWIO for convolutions), and so are the fans
    # its initialisers compute.
    return _core.variable(ctx.scope, name, dtype.kiln, [int(d) for d in shape], i.kind, i.a, i.b, int(seed),
                          i.mode, i.distribution, "HWIO")


def get_or_create_global_step():
    """The step counter, an int64 scalar variable 'global_step:0'."""
    return _core.global_step(current("get_or_create_global_step").scope)


def get_global_step():
    return get_or_create_global_step()
