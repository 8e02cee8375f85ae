"""The seed's npu_optimizer module. NPUDistributedOptimizer wraps an optimizer so that its
gradients are averaged over the devices of a job: kiln's optimizers already average over
the ranks of a data-parallel job (mpirun), so it delegates. NPULossScaleOptimizer with a
loss scale manager scales the loss for float16: kiln's own dynamic loss scaler does that in
accelerate_train_mode's float16 phase (and float32 needs none), so it delegates too; the
managers' settings are checked and kept for what they report."""
from kiln._src.graph import unsupported
from kiln._src.optimizers import Optimizer


class _Delegating:
    def __init__(self, opt):
        if not isinstance(opt, (Optimizer, _Delegating)):
            raise TypeError("[%s] wraps a kiln optimizer, not %r" % (type(self).__name__, opt))
        self._opt = opt

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, *args, **kwargs):
        return self._opt.apply_gradients(*args, **kwargs)

    def minimize(self, *args, **kwargs):
        return self._opt.minimize(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self):
        return self._opt.get_slot_names()

    def __getattr__(self, name):
        return getattr(self._opt, name)


class NPUDistributedOptimizer(_Delegating):
    def __init__(self, optimizer, is_weight_update_sharding=False, is_loss_scale=False):
        if is_weight_update_sharding:
            unsupported("NPUDistributedOptimizer(is_weight_update_sharding=True)", "kiln updates every weight on "
                        "every rank")
        super().__init__(optimizer)


class FixedLossScaleManager:
    def __init__(self, loss_scale, enable_overflow_check=True):
        if not loss_scale >= 1:
            raise ValueError("[FixedLossScaleManager] loss_scale %r must be >= 1" % (loss_scale,))
        self._scale = float(loss_scale)

    def get_loss_scale(self):
        return self._scale


class ExponentialUpdateLossScaleManager:
    def __init__(self, init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.8):
        if not init_loss_scale >= 1 or incr_every_n_steps < 1:
            raise ValueError("[ExponentialUpdateLossScaleManager] init_loss_scale >= 1 and incr_every_n_steps >= 1")
        self._scale = float(init_loss_scale)

    def get_loss_scale(self):
        return self._scale


class NPULossScaleOptimizer(_Delegating):
    def __init__(self, opt, loss_scale_manager, is_distributed=False):
        if not isinstance(loss_scale_manager, (FixedLossScaleManager, ExponentialUpdateLossScaleManager)):
            raise TypeError("[NPULossScaleOptimizer] loss_scale_manager must be a FixedLossScaleManager or "
                            "ExponentialUpdateLossScaleManager")
        super().__init__(opt)
        self._manager = loss_scale_manager


def npu_tf_optimizer(opt):
    """The seed's npu_tf_optimizer(): the optimizer itself on kiln."""
    return opt


def npu_distributed_optimizer_wrapper(opt):
    return NPUDistributedOptimizer(opt) if not isinstance(opt, NPUDistributedOptimizer) else opt
