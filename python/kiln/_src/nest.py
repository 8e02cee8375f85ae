"""tf.nest (tensorflow.python.util.nest): functions over nested structures of lists,
tuples, namedtuples and dicts (sorted by key, as TensorFlow flattens them). A TensorShape
is a leaf, as in TensorFlow."""
from kiln._src.graph import TensorShape


def is_nested(structure):
    return isinstance(structure, (list, tuple, dict)) and not isinstance(structure, TensorShape)


is_sequence = is_nested


def flatten(structure, expand_composites=False):
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in flatten(structure[k])]
    if is_nested(structure):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def _rebuild(like, leaves):
    if isinstance(like, dict):
        built = {k: _rebuild(like[k], leaves) for k in sorted(like)}
        return type(like)((k, built[k]) for k in like)
    if is_nested(like):
        items = [_rebuild(item, leaves) for item in like]
        if isinstance(like, tuple) and hasattr(like, "_fields"):  # a namedtuple
            return type(like)(*items)
        return type(like)(items)
    return next(leaves)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    flat = list(flat_sequence)
    n = len(flatten(structure))
    if n != len(flat):
        raise ValueError("[nest.pack_sequence_as] the structure has %d leaves; flat_sequence has %d" % (n, len(flat)))
    return _rebuild(structure, iter(flat))


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    def shape(s):
        if isinstance(s, dict):
            return ("dict", tuple((k, shape(s[k])) for k in sorted(s)))
        if is_nested(s):
            return (type(s).__name__ if check_types else "seq", tuple(shape(i) for i in s))
        return "leaf"
    if shape(nest1) != shape(nest2):
        raise ValueError("[nest.assert_same_structure] the two structures differ: %r and %r" % (nest1, nest2))


def map_structure(func, *structure, **kwargs):
    if not structure:
        raise ValueError("[nest.map_structure] needs at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, kwargs.get("check_types", True))
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
