"""tf.keras.regularizers: l1, l2, l1_l2 (loss = l1 * sum|w| + l2 * sum w^2)."""
from kiln._src.graph import abs as _abs
from kiln._src.graph import reduce_sum, square


class Regularizer:
    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, w):
        loss = None
        if self.l1:
            loss = reduce_sum(_abs(w)) * self.l1
        if self.l2:
            part = reduce_sum(square(w)) * self.l2
            loss = part if loss is None else loss + part
        return loss

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


def l1(l=0.01):  # noqa: E741 (keras's name)
    return Regularizer(l1=l)


def l2(l=0.01):  # noqa: E741
    return Regularizer(l2=l)


def l1_l2(l1=0.01, l2=0.01):
    return Regularizer(l1=l1, l2=l2)


L1, L2, L1L2 = l1, l2, l1_l2
