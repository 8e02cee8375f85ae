"""TensorFlow 1.x's optimizers (tf.train.*Optimizer) over kiln's C++ optimizers: minimize,
or compute_gradients and apply_gradients with anything between them (clip_by_global_norm,
a gradient filter). Their numbers are hyperparameters of the graph (another learning rate
loads the same compiled step); their slots are named as TensorFlow names them
('<var>/Momentum', '<var>/Adam', ...). Under accelerate_train_mode's float16 phase the loss
is scaled and the updates guarded by kiln's dynamic loss scaler, whichever form is used.
Also ExponentialMovingAverage."""
import math
import numbers

from kiln import _core
from kiln._src import scopes as _scopes
from kiln._src.graph import Tensor, cast, convert_to_tensor, current, minimum, unsupported
from kiln._src.variables import global_variables, trainable_variables


def check_number(name, value, low, high=None, low_open=False):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or (
            value <= low if low_open else value < low) or (high is not None and not value < high):
        what = ("a positive number" if low_open else "a number >= %g" % low) if high is None else "a number in [%g, %g)" % (low, high)
        raise _core.ConfigError("[%s] %r must be %s" % (name, value, what))
    return float(value)


class Optimizer:
    """The base of TensorFlow's tf.compat.v1.train optimizers. learning_rate is a number or
    a float scalar tensor of the graph (a decay of global_step). The keras-style keyword
    global_clipnorm clips the gradients to that global L2 norm before the update."""

    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2
    _kind = None
    _slots = ()

    def __init__(self, learning_rate, a=0.0, b=0.0, epsilon=0.0, flag=False, weight_decay=0.0, global_clipnorm=None,
                 use_locking=False, name=None):
        if type(self)._kind is None:
            unsupported("a subclass of tf.train.Optimizer (%s)" % type(self).__name__,
                        "kiln's optimizers are GradientDescent, Momentum, Adam, AdamW, RMSProp and Adagrad")
        self._lr_tensor = None
        if isinstance(learning_rate, Tensor):
            self._lr_tensor, self._lr = learning_rate, 1.0
        elif callable(learning_rate):
            self._lr_fn, self._lr = learning_rate, None
        else:
            self._lr = check_number("learning_rate", learning_rate, 0.0, low_open=True)
        self._clip = 0.0 if global_clipnorm is None else check_number("global_clipnorm", global_clipnorm, 0.0,
                                                                      low_open=True)
        self._a, self._b, self._eps, self._flag, self._wd = float(a), float(b), float(epsilon), bool(flag), float(
            weight_decay)
        self._name = name or type(self).__name__.replace("Optimizer", "")
        self._handles = {}

    def get_name(self):
        return self._name

    # --- the C++ optimizer of the graph being built ----------------------------------------

    def _handle(self):
        ctx = current("optimizer")
        h = self._handles.get(id(ctx))
        if h is None or h[0] is not ctx:
            lr = self._lr
            lr_tensor = self._lr_tensor
            if lr is None:  # a callable learning rate
                value = self._lr_fn()
                if isinstance(value, Tensor):
                    lr_tensor, lr = value, 1.0
                else:
                    lr = check_number("learning_rate", value, 0.0, low_open=True)
            core = _core.Optimizer(self._kind, lr, self._a, self._b, self._eps, self._flag, self._wd)
            if lr_tensor is not None:
                core.set_learning_rate(lr_tensor)
            if self._clip:
                core.set_clip_norm(self._clip)
            h = (ctx, core)
            self._handles = {id(ctx): h}  # one graph at a time
        return h[1]

    # --- TensorFlow's API -------------------------------------------------------------------

    def compute_gradients(self, loss, var_list=None, gate_gradients=1, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """[(gradient, variable)] for var_list (default: the trainable variables)."""
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        if not isinstance(loss, Tensor):
            raise TypeError("[compute_gradients] loss must be a kiln.Tensor, not %s" % type(loss).__name__)
        if grad_loss is not None:
            unsupported("compute_gradients(grad_loss=...)", "kiln differentiates the loss itself")
        vars_ = _var_list(var_list)
        ctx = current("compute_gradients")
        if ctx.graph is not None:  # a tf.Graph: a Session may run its steps loss-scaled
            ctx.graph.loss_scale()
        return [(g, v) for g, v in self._handle().compute_gradients(loss, vars_)]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The updates of the variables by their gradients (pairs whose gradient is None are
        left out), and of global_step when it is given."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("[apply_gradients] no gradients to apply (every one is None)")
        for g, v in pairs:
            if not isinstance(v, Tensor) or v._op != "variable":
                raise TypeError("[apply_gradients] %r is not a variable" % (v,))
        _check_global_step(global_step)
        grads = [convert_to_tensor(g, like=v, op="apply_gradients") for g, v in pairs]
        core = self._handle().apply_gradients(grads, [v for _, v in pairs], global_step is not None)
        return _scopes.Operation(name or self._name, core_ops=[core], deps=_scopes.current_dependencies())

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=1, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """compute_gradients then apply_gradients, in one graph step. In a model_fn the global
        step always advances (kiln's Estimator counts steps by it); in a tf.Graph only when
        given, as TensorFlow's (a GAN's two optimizers run in one sess.run count nothing)."""
        if not isinstance(loss, Tensor):
            raise TypeError("[minimize] loss must be a kiln.Tensor, not %s" % type(loss).__name__)
        _check_global_step(global_step)
        grads = self.compute_gradients(loss, var_list, grad_loss=grad_loss)
        if global_step is None and current("minimize").graph is None:
            global_step = _StepAnyway  # a model_fn's: the Estimator counts its steps by it
        op = self.apply_gradients(grads, global_step=global_step, name=name)
        op._deps.extend(_scopes.dependencies_of(loss))
        return op

    def get_slot_names(self):
        return list(type(self)._slots)

    def get_slot(self, var, name):
        ctx = current("get_slot")
        suffix = {"m": "Adam", "v": "Adam_1", "momentum": "Momentum", "accumulator": "Adagrad", "rms": "RMSProp"}.get(
            name, name)
        return ctx.scope.find(var._name + "/" + suffix)

    def variables(self):
        ctx = current("variables")
        out = []
        for name in ctx.scope.named_values():
            t = ctx.scope.find(name)
            if t._op == "variable" and any(name.endswith("/" + s) for s in type(self)._slots):
                out.append(t)
        return out


class _StepAnywayType:
    """minimize() in a model_fn advances the step, global_step given or not."""


_StepAnyway = _StepAnywayType()


def _check_global_step(global_step):
    if global_step is None or global_step is _StepAnyway:
        return
    if not isinstance(global_step, Tensor) or global_step._name != "global_step":
        raise ValueError("[minimize] global_step must be kiln.train.get_or_create_global_step() (or "
                         "get_global_step())")


def _var_list(var_list):
    if var_list is None:
        return []
    out = []
    for v in var_list:
        if not isinstance(v, Tensor) or v._op != "variable":
            raise TypeError("[var_list] %r is not a variable" % (v,))
        out.append(v)
    return out


class GradientDescentOptimizer(Optimizer):
    _kind = "sgd"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent", global_clipnorm=None):
        super().__init__(learning_rate, global_clipnorm=global_clipnorm, name=name)


class MomentumOptimizer(Optimizer):
    _kind = "momentum"
    _slots = ("Momentum",)

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False,
                 global_clipnorm=None):
        check_number("momentum", momentum, 0.0, 1.0)
        super().__init__(learning_rate, momentum, flag=use_nesterov, global_clipnorm=global_clipnorm, name=name)


def _check_adam(beta1, beta2, epsilon):
    check_number("beta1", beta1, 0.0, 1.0)
    check_number("beta2", beta2, 0.0, 1.0)
    check_number("epsilon", epsilon, 0.0, low_open=True)


class AdamOptimizer(Optimizer):
    _kind = "adam"
    _slots = ("Adam", "Adam_1")

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name="Adam",
                 global_clipnorm=None):
        _check_adam(beta1, beta2, epsilon)
        super().__init__(learning_rate, beta1, beta2, epsilon, global_clipnorm=global_clipnorm, name=name)


class AdamWOptimizer(Optimizer):
    """AdamW as keras.optimizers.AdamW and torch.optim.AdamW compute it: each step
    var -= learning_rate * weight_decay * var (decoupled), then the bias-corrected Adam step.
    Decays weights of rank 2 or more except embedding tables ("embedding" in the name); not
    biases or normalisation parameters. Note: tf.contrib.opt.AdamWOptimizer does not scale
    the decay by the learning rate; kiln does, so weight_decay here is keras's (e.g. 0.004–0.1)."""

    _kind = "adamw"
    _slots = ("Adam", "Adam_1")

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta1=0.9, beta2=0.999, epsilon=1e-07,
                 use_locking=False, name="AdamW", global_clipnorm=None):
        _check_adam(beta1, beta2, epsilon)
        wd = check_number("weight_decay", weight_decay, 0.0)
        super().__init__(learning_rate, beta1, beta2, epsilon, weight_decay=wd, global_clipnorm=global_clipnorm,
                         name=name)


class RMSPropOptimizer(Optimizer):
    """TensorFlow 1's RMSProp: ms starts at 1; mom = momentum mom + lr g / sqrt(ms + eps)."""

    _kind = "rmsprop"
    _slots = ("RMSProp", "RMSProp_1", "RMSProp_2")

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp", global_clipnorm=None):
        check_number("decay", decay, 0.0, 1.0 + 1e-12)
        check_number("momentum", momentum, 0.0, 1.0)
        check_number("epsilon", epsilon, 0.0, low_open=True)
        super().__init__(learning_rate, decay, momentum, epsilon, flag=centered, global_clipnorm=global_clipnorm,
                         name=name)


class AdagradOptimizer(Optimizer):
    _kind = "adagrad"
    _slots = ("Adagrad",)

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad",
                 global_clipnorm=None):
        check_number("initial_accumulator_value", initial_accumulator_value, 0.0, low_open=True)
        super().__init__(learning_rate, initial_accumulator_value, global_clipnorm=global_clipnorm, name=name)


def AdadeltaOptimizer(*args, **kwargs):  # noqa: N802 (TensorFlow's name)
    unsupported("AdadeltaOptimizer", "use RMSPropOptimizer, AdagradOptimizer, AdamOptimizer or MomentumOptimizer")


class ExponentialMovingAverage:
    """tf.train.ExponentialMovingAverage: apply(var_list) makes a shadow of each variable
    ('<var>/ExponentialMovingAverage', starting at the variable's initial value) and returns
    the op that moves it: shadow -= (shadow - var) * (1 - decay), decay min(decay, (1 +
    num_updates) / (10 + num_updates)) with num_updates. (kiln's step reads variables at its
    start: the shadow follows the variable one step behind a TensorFlow run whose op runs
    after the train_op.)"""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        if zero_debias:
            unsupported("ExponentialMovingAverage(zero_debias=True)", "kiln's averages start at the variable's value")
        self._decay = check_number("decay", decay, 0.0, 1.0 + 1e-12)
        self._num_updates = num_updates
        self._name = name
        self._shadows = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        ctx = current("ExponentialMovingAverage")
        var_list = list(var_list) if var_list is not None else trainable_variables()
        decay = convert_to_tensor(self._decay, op="ExponentialMovingAverage")
        if self._num_updates is not None:
            n = cast(convert_to_tensor(self._num_updates, op="ExponentialMovingAverage"), "float32")
            decay = minimum(decay, (1.0 + n) / (10.0 + n))
        updates = []
        for v in var_list:
            if not isinstance(v, Tensor) or v._op != "variable":
                raise TypeError("[ExponentialMovingAverage] %r is not a variable" % (v,))
            shadow = self._shadows.get(v._name)
            if shadow is None:
                shadow = _core.shadow_variable(v, self.average_name(v))
                self._shadows[v._name] = shadow
                _scopes.add_to_collection(_scopes.GraphKeys.MOVING_AVERAGE_VARIABLES, v)
                _scopes.add_to_collection(_scopes.GraphKeys.GLOBAL_VARIABLES, shadow)
            updates.append(_scopes.Update(shadow, shadow - (shadow - v) * (1.0 - decay)))
        _ = ctx
        return _scopes.group(*updates)

    def average(self, var):
        return self._shadows.get(var._name)

    def average_name(self, var):
        return var._name + "/" + self._name

    def variables_to_restore(self, moving_avg_variables=None):
        """{checkpoint name: variable} to restore the averages into the variables, as
        TensorFlow's: the trainable variables and the MOVING_AVERAGE_VARIABLES collection
        (or moving_avg_variables) by their average's name, whether or not this graph
        averages them (an evaluation graph does not); every other global variable by its own."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + _scopes.get_collection(
                _scopes.GraphKeys.MOVING_AVERAGE_VARIABLES)
        averaged = {v._name: v for v in moving_avg_variables}
        out = {self.average_name(v): v for v in averaged.values()}
        for v in global_variables():
            if v._name not in averaged and v._name not in out:
                out[v._name] = v
        return out
