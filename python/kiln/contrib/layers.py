"""tf.contrib.layers: regularizers, initializers, the functional layers and optimize_loss."""
from kiln import _core
from kiln._src import initializers as _init
from kiln._src import layers as _layers
from kiln._src import nn
from kiln._src import scopes as _scopes
from kiln._src import train as _train
from kiln._src.array_ops import add_n, clip_by_global_norm
from kiln._src.graph import abs as _abs
from kiln._src.graph import matmul, reduce_mean, reduce_sum, reshape, rsqrt, square, unsupported
from kiln._src.layers_norm import BatchNormalization
from kiln._src.variables import get_variable, trainable_variables
from kiln.contrib.framework import add_arg_scope

xavier_initializer = _init.xavier_initializer
xavier_initializer_conv2d = _init.xavier_initializer
variance_scaling_initializer = _init.contrib_variance_scaling


def l2_regularizer(scale, scope=None):
    """scale * sum(w^2) / 2 (TensorFlow's l2_loss); scale 0 gives no loss."""
    scale = float(scale)
    if scale < 0:
        raise ValueError("[l2_regularizer] scale %r must be >= 0" % scale)
    return lambda w: None if scale == 0 else nn.l2_loss(w) * scale


def l1_regularizer(scale, scope=None):
    scale = float(scale)
    return lambda w: None if scale == 0 else reduce_sum(_abs(w)) * scale


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    l1, l2 = l1_regularizer(scale_l1), l2_regularizer(scale_l2)

    def reg(w):
        a, b = l1(w), l2(w)
        return b if a is None else (a if b is None else a + b)
    return reg


def apply_regularization(regularizer, weights_list=None):
    losses = [regularizer(w) for w in (weights_list if weights_list is not None else trainable_variables())]
    loss = add_n([x for x in losses if x is not None])
    _scopes.add_to_collection(_scopes.GraphKeys.REGULARIZATION_LOSSES, loss)
    return loss


def _norm_params(normalizer_fn, normalizer_params, is_training=None):
    return normalizer_fn, dict(normalizer_params or {})


def _finish(y, activation_fn, normalizer_fn, normalizer_params, outputs_collections=None):
    if normalizer_fn is not None:
        y = normalizer_fn(y, **dict(normalizer_params or {}))
    if activation_fn is not None:
        y = activation_fn(y)
    if outputs_collections:
        _scopes.add_to_collections(outputs_collections, y)
    return y


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn.relu, normalizer_fn=None, normalizer_params=None,
                    weights_initializer=None, weights_regularizer=None, biases_initializer=_init.zeros(),
                    biases_regularizer=None, reuse=None, variables_collections=None, outputs_collections=None,
                    trainable=True, scope=None):
    """slim/contrib's fully_connected: variables '<scope>/weights' and '<scope>/biases'
    (scope default 'fully_connected'); no biases with a normalizer."""
    with _scopes.variable_scope(scope, default_name="fully_connected", reuse=reuse):
        n = inputs._shape[-1]
        w = get_variable("weights", [n, int(num_outputs)], initializer=weights_initializer or _init.xavier_initializer(),
                         regularizer=weights_regularizer, trainable=trainable)
        flat = inputs if len(inputs._shape) == 2 else reshape(inputs, [-1, n])
        y = matmul(flat, w)
        if normalizer_fn is None and biases_initializer is not None:
            b = get_variable("biases", [int(num_outputs)], initializer=biases_initializer,
                             regularizer=biases_regularizer, trainable=trainable)
            y = y + b
        if len(inputs._shape) != 2:
            y = reshape(y, list(inputs._shape[:-1]) + [int(num_outputs)])
        return _finish(y, activation_fn, normalizer_fn, normalizer_params, outputs_collections)


@add_arg_scope
def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1, activation_fn=nn.relu,
           normalizer_fn=None, normalizer_params=None, weights_initializer=None, weights_regularizer=None,
           biases_initializer=_init.zeros(), biases_regularizer=None, reuse=None, variables_collections=None,
           outputs_collections=None, trainable=True, scope=None):
    """slim/contrib's conv2d: '<scope>/weights' [kh, kw, in, out] and '<scope>/biases'
    (scope default 'Conv'); no biases with a normalizer."""
    fmt = "NHWC" if data_format in (None, "NHWC") else "NCHW"
    kh, kw = nn._pair(kernel_size, "conv2d kernel_size")
    st = nn._pair(stride, "conv2d stride")
    with _scopes.variable_scope(scope, default_name="Conv", reuse=reuse):
        cin = inputs._shape[3] if fmt == "NHWC" else inputs._shape[1]
        w = get_variable("weights", [kh, kw, cin, int(num_outputs)],
                         initializer=weights_initializer or _init.xavier_initializer(), regularizer=weights_regularizer,
                         trainable=trainable)
        strides = [1] + st + [1] if fmt == "NHWC" else [1, 1] + st
        y = nn.conv2d(inputs, w, strides, padding, data_format=fmt, dilations=None if rate == 1 else [rate, rate])
        if normalizer_fn is None and biases_initializer is not None:
            b = get_variable("biases", [int(num_outputs)], initializer=biases_initializer,
                             regularizer=biases_regularizer, trainable=trainable)
            y = nn.bias_add(y, b, data_format=fmt)
        return _finish(y, activation_fn, normalizer_fn, normalizer_params, outputs_collections)


convolution2d = conv2d


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    return nn.max_pool2d(inputs, nn._pair(kernel_size, "max_pool2d"), nn._pair(stride, "max_pool2d"), padding,
                         data_format)


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC", outputs_collections=None,
               scope=None):
    return nn.avg_pool2d(inputs, nn._pair(kernel_size, "avg_pool2d"), nn._pair(stride, "avg_pool2d"), padding,
                         data_format)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    return _layers.flatten(inputs)


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None, scope=None, seed=None):
    return _layers.dropout(inputs, 1.0 - keep_prob, noise_shape, seed, training=is_training)


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None, updates_collections=_scopes.GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC", zero_debias_moving_mean=False, scope=None,
               renorm=False, renorm_clipping=None, renorm_decay=0.99, adjustment=None):
    """contrib's batch_norm (decay 0.999, no scale by default); its updates go to
    updates_collections (None: run in place, which kiln does by holding them in the
    train_op's dependencies as UPDATE_OPS would)."""
    if batch_weights is not None or zero_debias_moving_mean:
        unsupported("batch_norm(batch_weights=, zero_debias_moving_mean=)", "kiln's batch norm is plain")
    pi = param_initializers or {}
    layer = BatchNormalization(axis=-1 if data_format == "NHWC" else 1, momentum=decay, epsilon=epsilon, center=center,
                               scale=scale, beta_initializer=pi.get("beta"), gamma_initializer=pi.get("gamma"),
                               moving_mean_initializer=pi.get("moving_mean"),
                               moving_variance_initializer=pi.get("moving_variance"), trainable=trainable,
                               name=scope or None, _reuse=reuse)
    layer._base_name = "BatchNorm"
    y = layer(inputs, training=is_training)
    if updates_collections is None:  # in place: they run in every training step
        for u in layer.updates:
            u._run()
    return activation_fn(y) if activation_fn is not None else y


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None, variables_collections=None,
               outputs_collections=None, trainable=True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """contrib's layer_norm: mean and variance over the axes from begin_norm_axis, gamma
    and beta over those from begin_params_axis ('<scope>/gamma', '<scope>/beta')."""
    rank = len(inputs._shape)
    norm_axes = list(range(begin_norm_axis % rank, rank))
    params_shape = list(inputs._shape[begin_params_axis % rank:])
    with _scopes.variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        mean = reduce_mean(inputs, norm_axes, keepdims=True)
        var = reduce_mean(square(inputs - mean), norm_axes, keepdims=True)
        y = (inputs - mean) * rsqrt(var + 1e-12)
        bshape = [1] * (rank - len(params_shape)) + params_shape
        if scale:
            y = y * _core.reshape(get_variable("gamma", params_shape, initializer=_init.ones(), trainable=trainable),
                                  bshape)
        if center:
            y = y + _core.reshape(get_variable("beta", params_shape, initializer=_init.zeros(), trainable=trainable),
                                  bshape)
    return activation_fn(y) if activation_fn is not None else y


_OPTIMIZERS = {"SGD": "GradientDescentOptimizer", "Momentum": "MomentumOptimizer", "Adam": "AdamOptimizer",
               "Adagrad": "AdagradOptimizer", "RMSProp": "RMSPropOptimizer"}


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None, gradient_multipliers=None,
                  clip_gradients=None, learning_rate_decay_fn=None, update_ops=None, variables=None, name=None,
                  summaries=None, colocate_gradients_with_ops=False, increment_global_step=True):
    """contrib's optimize_loss: minimize with a named optimizer ('SGD', 'Adam', 'Adagrad',
    'RMSProp'; Momentum needs an instance), clip_gradients by global norm, and the
    UPDATE_OPS collection run with the update (as optimize_loss does)."""
    if gradient_noise_scale is not None or gradient_multipliers is not None:
        unsupported("optimize_loss(gradient_noise_scale=, gradient_multipliers=)", "use compute/apply_gradients")
    lr = learning_rate
    if learning_rate_decay_fn is not None:
        lr = learning_rate_decay_fn(lr, global_step)
    if isinstance(optimizer, str):
        if optimizer not in _OPTIMIZERS or optimizer == "Momentum":
            raise ValueError("[optimize_loss] optimizer %r is not one of: %s (Momentum: pass an instance)"
                             % (optimizer, ", ".join(k for k in _OPTIMIZERS if k != "Momentum")))
        opt = getattr(_train, _OPTIMIZERS[optimizer])(lr)
    elif callable(optimizer) and not hasattr(optimizer, "compute_gradients"):
        opt = optimizer(lr)
    else:
        opt = optimizer
    grads = opt.compute_gradients(loss, var_list=variables)
    if clip_gradients is not None:
        if callable(clip_gradients):
            grads = clip_gradients(grads)
        else:
            clipped, _ = clip_by_global_norm([g for g, _ in grads], float(clip_gradients))
            grads = list(zip(clipped, [v for _, v in grads]))
    ups = _scopes.get_collection(_scopes.GraphKeys.UPDATE_OPS) if update_ops is None else list(update_ops)
    with _scopes.control_dependencies(ups):
        return opt.apply_gradients(grads, global_step=global_step if increment_global_step else None)
