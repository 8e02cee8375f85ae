"""The one error for a TensorFlow name kiln does not provide, at the bottom of kiln._src so
that every module can raise it."""


def unsupported(name, why):
    """Raises NotImplementedError for a TensorFlow name kiln does not provide."""
    raise NotImplementedError("%s is not provided by kiln: %s" % (name, why))
