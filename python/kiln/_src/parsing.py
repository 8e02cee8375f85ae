"""tf.io's parsing and decoding ops of input pipelines: parse_single_example / parse_example
over tf.train.Example protos (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature),
decode_raw, and sparse.to_dense for what a VarLenFeature gives.

They are host ops (kiln/_src/map_function.py): in the function of Dataset.map they run outside
the graph, on the element's string components; called on plain bytes they return numpy
values at once. The protos are decoded by protobuf in C++ (src/formats/example.cpp), which
names the example and the key when a record does not fit the spec.
"""
import numbers

import numpy as np

from kiln import _core
from kiln._src.dtypes import as_dtype
from kiln._src.map_function import SparseTensorValue, host_op

_TYPES = {"float32": "float32", "int64": "int64", "string": "string"}


def _spec_dtype(dtype, what):
    d = as_dtype(dtype)
    if d.name not in _TYPES:
        raise ValueError("[%s] dtype %s: a tf.train.Example feature is float32, int64 or string" % (what, d.name))
    return d.name


def _shape(shape, what):
    if isinstance(shape, numbers.Integral):
        shape = [shape]
    dims = list(shape.as_list() if hasattr(shape, "as_list") else shape)
    if any(d is None or isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0 for d in dims):
        raise ValueError("[%s] shape %r must be fully defined (integers >= 0)" % (what, shape))
    return [int(d) for d in dims]


class FixedLenFeature:
    """A feature of a fixed shape; default_value (a value of that shape, or one value for
    every element) when an example lacks it, else a missing feature is an error."""

    def __init__(self, shape, dtype, default_value=None):
        self.shape = _shape(shape, "FixedLenFeature")
        self.dtype = as_dtype(dtype)
        self.default_value = default_value
        self._kind, self._type = "fixed", _spec_dtype(dtype, "FixedLenFeature")


class VarLenFeature:
    """Any number of values per example: parsed to a SparseTensorValue."""

    def __init__(self, dtype):
        self.dtype = as_dtype(dtype)
        self.shape, self.default_value = [], None
        self._kind, self._type = "var", _spec_dtype(dtype, "VarLenFeature")


class FixedLenSequenceFeature:
    """Any number of steps of a fixed shape: [steps, *shape], padded across a batch with
    default_value (0 or b'' without one). allow_missing must be True, as TensorFlow requires
    for tf.train.Example."""

    def __init__(self, shape, dtype, allow_missing=False, default_value=None):
        if not allow_missing:
            raise ValueError("[FixedLenSequenceFeature] requires allow_missing=True for tf.train.Example "
                             "(as TensorFlow does)")
        self.shape = _shape(shape, "FixedLenSequenceFeature")
        self.dtype = as_dtype(dtype)
        self.allow_missing = True
        self.default_value = default_value
        self._kind, self._type = "sequence", _spec_dtype(dtype, "FixedLenSequenceFeature")


def _specs(features, op):
    if not isinstance(features, dict) or not features:
        raise TypeError("[%s] features must be a dict of feature name -> FixedLenFeature, VarLenFeature or "
                        "FixedLenSequenceFeature" % op)
    out = []
    for key, f in features.items():
        if not isinstance(f, (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature)):
            raise TypeError("[%s] feature %r is a %s; valid: FixedLenFeature, VarLenFeature, FixedLenSequenceFeature"
                            % (op, key, type(f).__name__))
        numbers_, bytes_ = None, None
        if f.default_value is not None:
            flat = np.asarray(f.default_value, dtype=object if f._type != "float32" else np.float64).reshape(-1)
            if f._type == "string":
                bytes_ = [v if isinstance(v, bytes) else str(v).encode() for v in flat]
            elif f._type == "int64":
                numbers_ = [_int64_default(v, key, op) for v in flat]  # exact: never through a double
            else:
                numbers_ = [float(v) for v in flat]
            if f._kind == "sequence":
                if flat.size != 1:
                    raise ValueError("[%s] FixedLenSequenceFeature %r: default_value is the padding, one value" % (op, key))
                numbers_, bytes_ = None, None  # the padding: _parse pads with it
        out.append((str(key), f._kind, f._type, list(f.shape), numbers_, bytes_))
    return out


def _int64_default(v, key, op):
    """An int64 feature's default value as a Python int, exactly (2**63-1 stays 2**63-1)."""
    if isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_)):
        i = int(v)
    elif isinstance(v, (numbers.Real, np.floating)) and float(v).is_integer():
        i = int(v)
    else:
        raise ValueError("[%s] feature %r: default_value %r is not an int64" % (op, key, v))
    if not -2**63 <= i < 2**63:
        raise ValueError("[%s] feature %r: default_value %d is outside int64's range -2**63 .. 2**63-1" % (op, key, i))
    return i


def _records(serialized, op):
    arr = serialized if isinstance(serialized, (list, tuple)) else np.asarray(serialized, dtype=object).reshape(-1)
    out = []
    for r in arr:
        if isinstance(r, str):
            r = r.encode()
        if not isinstance(r, (bytes, bytearray)):
            raise TypeError("[%s] serialized holds a %s; it takes serialized tf.train.Example bytes" % (op, type(r).__name__))
        out.append(bytes(r))
    return out


def _np_type(t):
    return {"float32": np.float32, "int64": np.int64, "string": object}[t]


def _parse(serialized, features, op, single):
    records = _records([serialized] if single else serialized, op)
    specs = _specs(features, op)
    parsed = _core.parse_examples(records, specs)
    n = len(records)
    out = {}
    for (key, kind, t, shape, _, _), f, (values, counts) in zip(specs, features.values(), parsed):
        values = np.array(values, dtype=_np_type(t)) if t == "string" else values
        if kind == "fixed":
            v = values.reshape([n] + shape)
            out[key] = v[0] if single else v
        elif kind == "var":
            rows = np.repeat(np.arange(n, dtype=np.int64), counts)
            cols = np.concatenate([np.arange(c, dtype=np.int64) for c in counts]) if n else np.zeros(0, np.int64)
            width = int(counts.max()) if n and counts.size else 0
            if single:
                out[key] = SparseTensorValue(cols.reshape(-1, 1), values, np.array([width], np.int64))
            else:
                out[key] = SparseTensorValue(np.stack([rows, cols], axis=1), values, np.array([n, width], np.int64))
        else:
            step = int(np.prod(shape)) if shape else 1
            steps = counts // step if step else counts * 0
            longest = int(steps.max()) if steps.size else 0
            pad = (b"" if t == "string" else 0) if f.default_value is None else np.asarray(f.default_value).reshape(-1)[0]
            dense = np.full([n, longest] + shape, pad, dtype=_np_type(t))
            at = 0
            for i, s in enumerate(steps):
                dense[i, :s] = values[at:at + s * step].reshape([s] + shape)
                at += s * step
            out[key] = dense[0] if single else dense
    return out


def parse_single_example(serialized, features, name=None, example_names=None):
    """One serialized tf.train.Example -> {key: value} (a SparseTensorValue for VarLenFeature)."""
    specs = _specs(features, "parse_single_example")
    fixed = all((kind == "fixed" and (t != "string" or shape == [])) or (kind == "var" and t != "string")
                for _, kind, t, shape, _, _ in specs)  # what the C++ form parses
    return host_op("parse_single_example", lambda s, spec: _parse(s, spec, "parse_single_example", True),
                   serialized, features, native=("parse_example", {"features": specs}) if fixed else None)


def parse_example(serialized, features, name=None, example_names=None):
    """A vector of serialized tf.train.Example -> {key: value batched along axis 0}."""
    return host_op("parse_example", lambda s, spec: _parse(s, spec, "parse_example", False), serialized, features)


def _decode_raw(data, out_type, little_endian, fixed_length):
    d = as_dtype(out_type)
    if d.name in ("string", "bfloat16"):
        raise ValueError("[decode_raw] out_type %s: valid are numeric types (uint8, int16, float32, ...)" % d.name)
    np_type = np.dtype(d.as_numpy_dtype).newbyteorder("<" if little_endian else ">")
    single = isinstance(data, (bytes, bytearray, str))
    items = [data] if single else list(np.asarray(data, dtype=object).reshape(-1))
    rows = []
    for b in items:
        b = b.encode() if isinstance(b, str) else bytes(b)
        if fixed_length is not None:
            b = b[:fixed_length].ljust(fixed_length, b"\0")
        if len(b) % np_type.itemsize:
            raise ValueError("[decode_raw] %d bytes are not a whole number of %s values (%d bytes each)"
                             % (len(b), d.name, np_type.itemsize))
        rows.append(np.frombuffer(b, dtype=np_type).astype(np_type.newbyteorder("=")))
    if single:
        return rows[0]
    if len({r.size for r in rows}) > 1:
        raise ValueError("[decode_raw] the strings decode to %s values; a batch needs one length (or fixed_length=)"
                         % sorted({r.size for r in rows}))
    return np.stack(rows).reshape(np.shape(data) + (rows[0].size if rows else 0,))


def decode_raw(input_bytes=None, out_type=None, little_endian=True, fixed_length=None, name=None, bytes=None):  # noqa: A002
    """The bytes of a string as a vector of out_type values (tf.io.decode_raw / tf.decode_raw)."""
    data = input_bytes if input_bytes is not None else bytes
    if out_type is None:
        raise TypeError("[decode_raw] needs out_type (e.g. kiln.uint8)")
    d = as_dtype(out_type)
    code = {"uint8": "u1", "int8": "i1", "uint16": "u2", "int16": "i2", "int32": "i4", "int64": "i8",
            "float16": "f2", "float32": "f4", "float64": "f8"}.get(d.name)
    native = None
    if code is not None and (fixed_length is None or isinstance(fixed_length, numbers.Integral)):
        native = ("decode_raw", {"to": code, "name": d.name, "little_endian": bool(little_endian),
                                 "fixed_length": -1 if fixed_length is None else int(fixed_length)})
    return host_op("decode_raw", lambda b, t, le, fl: _decode_raw(b, t, le, fl), data, out_type, bool(little_endian),
                   fixed_length, native=native)


def _to_dense(indices, values, dense_shape, default):
    values = np.asarray(values)
    out = np.full([int(d) for d in dense_shape], default if default is not None else (b"" if values.dtype == object else 0),
                  dtype=values.dtype)
    if len(values):
        out[tuple(np.asarray(indices).T)] = values
    return out


def sparse_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """tf.sparse.to_dense / tf.sparse_tensor_to_dense of a parsed SparseTensorValue."""
    if not isinstance(sp_input, SparseTensorValue):
        raise TypeError("[sparse.to_dense] takes what a VarLenFeature parses to, not a %s" % type(sp_input).__name__)
    return host_op("sparse.to_dense", _to_dense, sp_input.indices, sp_input.values, sp_input.dense_shape, default_value)


__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "parse_single_example", "parse_example",
           "decode_raw", "sparse_to_dense", "SparseTensorValue"]
