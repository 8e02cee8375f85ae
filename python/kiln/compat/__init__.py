"""tf.compat: v1 (and v2, for the few names scripts take from it) is kiln itself, so that
`import kiln.compat.v1 as tf` gives what `import tensorflow.compat.v1 as tf` does."""


def as_bytes(s, encoding="utf-8"):
    return s.encode(encoding) if isinstance(s, str) else bytes(s)


def as_text(b, encoding="utf-8"):
    return b.decode(encoding) if isinstance(b, bytes) else str(b)


as_str = as_text


def __getattr__(name):
    if name in ("v1", "v2"):
        import importlib
        return importlib.import_module("kiln.compat." + name)
    raise AttributeError("module 'kiln.compat' has no attribute %r" % name)
