"""Elements stacked into batches, as Dataset.batch and padded_batch make them (and the map
loops, which batch where they map): one numpy array per leaf of the element's structure."""
import numpy as np

from kiln._core import DataError


def _map_structure(fn, structure, *rest, path=""):
    """fn(leaf, *leaves, path) over a tuple/list/dict structure, keeping its form."""
    if isinstance(structure, dict):
        return {k: _map_structure(fn, v, *(r[k] for r in rest), path="%s[%r]" % (path, k)) for k, v in structure.items()}
    if isinstance(structure, (tuple, list)):
        return tuple(_map_structure(fn, v, *(r[i] for r in rest), path="%s[%d]" % (path, i))
                     for i, v in enumerate(structure))
    return fn(structure, *rest, path)


def _stack(elements, pad):
    if pad is not None:
        return _pad(elements, *pad)

    def leaf(*args):
        parts, path = args[:-1], args[-1]
        try:
            return np.stack(parts)
        except ValueError:
            raise DataError("[Dataset.batch] elements%s of shapes %s differ; use padded_batch to batch them"
                            % (path, sorted({p.shape for p in parts}))) from None
    return _map_structure(leaf, elements[0], *elements[1:])


def _pad(elements, shapes, values):
    def leaf(*args):
        path = args[-1]
        parts = args[:-1]
        n = len(elements)
        parts, target, value = parts[:n], parts[n] if shapes is not None else None, parts[-1] if values is not None else 0
        ndim = parts[0].ndim
        if any(p.ndim != ndim for p in parts):
            raise DataError("[Dataset.padded_batch] elements%s have ranks %s; padding needs one rank"
                            % (path, sorted({p.ndim for p in parts})))
        longest = [max(p.shape[d] for p in parts) for d in range(ndim)]
        if target is not None:
            if len(target) != ndim:
                raise DataError("[Dataset.padded_batch] padded_shapes%s %s has rank %d; the elements have rank %d"
                                % (path, target, len(target), ndim))
            for d, t in enumerate(target):
                if t is not None:
                    if longest[d] > t:
                        raise DataError("[Dataset.padded_batch] an element%s has %d in dimension %d, more than "
                                        "padded_shapes' %d" % (path, longest[d], d, t))
                    longest[d] = t
        out = np.full([len(parts)] + longest, value, dtype=parts[0].dtype)
        for i, p in enumerate(parts):
            out[(i,) + tuple(slice(0, s) for s in p.shape)] = p
        return out
    extra = ([shapes] if shapes is not None else []) + ([values] if values is not None else [])
    return _map_structure(leaf, elements[0], *elements[1:], *extra)


def batches(elements, size, drop, pad=None):
    """elements in batches of size (the last smaller unless drop), stacked (or padded)."""
    batch = []
    for element in elements:
        batch.append(element)
        if len(batch) == size:
            yield _stack(batch, pad)
            batch = []
    if batch and not drop:
        yield _stack(batch, pad)
