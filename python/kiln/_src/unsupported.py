"""The one error for a TensorFlow name kiln does not provide, at the bottom of kiln._src so
that every module can raise it."""


def unsupported(name, why):
    """Raises NotImplementedError for a TensorFlow name kiln does not provide."""
    raise NotImplementedError("%s is not provided by kiln: %s" % (name, why))


class NotProvidedError(NotImplementedError, AttributeError):
    """A name of a TensorFlow module kiln's mirror of it does not hold: NotImplementedError
    for the reader, AttributeError for hasattr() and getattr(..., default)."""


def refuse_other_names(module, why):
    """A module __getattr__ for a mirror of a TensorFlow module: a name the mirror lacks
    raises NotProvidedError naming the name, the module and why."""
    def __getattr__(name):  # noqa: N807 (the module hook's name)
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotProvidedError("%s.%s is not provided by kiln: %s" % (module, name, why))
    return __getattr__
