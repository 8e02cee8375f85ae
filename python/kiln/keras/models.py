"""tf.keras.Sequential and tf.keras.Model (subclassed, with call()) inside model_fn: a
model is a layer whose variables live under its name ('sequential/dense/kernel', as
TensorFlow names them in graph mode)."""
from kiln._src.graph import unsupported
from kiln._src.layer import Layer as _AnyLayer
from kiln.keras.layers import Layer, accepts_training


class Model(Layer):
    """Subclass and define call(inputs, training=None); layers made in __init__ become the
    model's. Model(inputs=, outputs=) (the functional API) is not provided."""

    def __init__(self, *args, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            unsupported("keras.Model(inputs, outputs) (the functional API)",
                        "subclass keras.Model and define call(), or use keras.Sequential")
        super().__init__(name=kwargs.pop("name", None), **kwargs)

    @property
    def layers(self):
        return [v for v in vars(self).values() if isinstance(v, _AnyLayer)]

    @property
    def updates(self):
        out = list(self.__dict__.get("_own_updates", []))
        for layer in self.layers:
            out.extend(layer.updates)
        return out

    @updates.setter
    def updates(self, value):
        self.__dict__["_own_updates"] = list(value)

    @property
    def losses(self):
        out = list(self.__dict__.get("_own_losses", []))
        for layer in self.layers:
            out.extend(layer.losses)
        return out

    @losses.setter
    def losses(self, value):
        self.__dict__["_own_losses"] = list(value)

    def compile(self, *args, **kwargs):
        unsupported("keras.Model.compile/fit", "kiln trains keras models inside an Estimator's model_fn")

    fit = evaluate = predict = compile

    def summary(self, print_fn=print):
        print_fn("Model: %s, %d layers" % (self.name, len(self.layers)))


class Sequential(Model):
    def __init__(self, layers=None, name=None):
        Layer.__init__(self, name=name)
        self._layers = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        if not isinstance(layer, _AnyLayer):
            raise TypeError("[Sequential] %r is not a keras layer" % (layer,))
        self._layers.append(layer)

    def pop(self):
        self._layers.pop()

    @property
    def layers(self):
        return list(self._layers)

    def call(self, inputs, training=None):
        x = inputs
        for layer in self._layers:
            x = layer(x, training=training) if accepts_training(layer) and training is not None else layer(x)
        return x
