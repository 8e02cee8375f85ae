"""tf.train.Example and its parts (Features, Feature, BytesList, FloatList, Int64List), as
scripts that write TFRecord files build them: Example(features=Features(feature={...}))
.SerializeToString() gives the bytes TensorFlow's protobuf class gives (serialized by
protobuf in C++, src/formats/example.cpp); Example.FromString / ParseFromString read them back."""
import numbers

import numpy as np

from kiln import _core
from kiln._src.parsing import _records


class _List:
    _type = None

    def __init__(self, value=()):
        self.value = list(value)

    def __repr__(self):
        return "%s(value=%r)" % (type(self).__name__, self.value)


class BytesList(_List):
    _type = "string"

    def __init__(self, value=()):
        out = []
        for v in value:
            if isinstance(v, str):
                v = v.encode()
            if not isinstance(v, (bytes, bytearray, np.bytes_)):
                raise TypeError("[BytesList] value holds a %s; it takes bytes" % type(v).__name__)
            out.append(bytes(v))
        self.value = out


class FloatList(_List):
    _type = "float32"

    def __init__(self, value=()):
        try:
            self.value = [float(v) for v in value]
        except (TypeError, ValueError):
            raise TypeError("[FloatList] value must hold numbers, not %r" % (value,)) from None


class Int64List(_List):
    _type = "int64"

    def __init__(self, value=()):
        out = []
        for v in value:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
                raise TypeError("[Int64List] value holds %r; it takes integers" % (v,))
            out.append(int(v))
        self.value = out


class Feature:
    """One of bytes_list=, float_list=, int64_list=."""

    def __init__(self, bytes_list=None, float_list=None, int64_list=None):
        given = [x for x in (bytes_list, float_list, int64_list) if x is not None]
        if len(given) > 1:
            raise ValueError("[Feature] give one of bytes_list, float_list, int64_list")
        self.bytes_list, self.float_list, self.int64_list = bytes_list, float_list, int64_list
        self._list = given[0] if given else None


class Features:
    def __init__(self, feature=None):
        self.feature = dict(feature or {})
        for k, f in self.feature.items():
            if not isinstance(f, Feature):
                raise TypeError("[Features] feature %r is a %s; it takes tf.train.Feature values" % (k, type(f).__name__))


class Example:
    def __init__(self, features=None):
        self.features = features if features is not None else Features()

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        items = []
        for key, f in self.features.feature.items():
            lst = f._list
            items.append((str(key), lst._type if lst is not None else "float32", lst.value if lst is not None else []))
        return _core.serialize_example(items)

    @staticmethod
    def FromString(data):  # noqa: N802
        e = Example()
        e.ParseFromString(data)
        return e

    def ParseFromString(self, data):  # noqa: N802
        keys = _core.example_keys(_records([data], "Example.ParseFromString")[0])
        feature = {}
        for key, kind, values in keys:
            lst = {"string": BytesList, "float32": FloatList, "int64": Int64List}.get(kind)
            feature[key] = Feature() if lst is None else Feature(**{
                {"string": "bytes_list", "float32": "float_list", "int64": "int64_list"}[kind]: lst(values)})
        self.features = Features(feature)
