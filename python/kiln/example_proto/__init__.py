"""tf.train.Example and its parts (Features, Feature, BytesList, FloatList, Int64List), as scripts
that write TFRecord files build them. The names; their code is in kiln._src.example_proto."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.example_proto import (
    BytesList,
    Example,
    Feature,
    Features,
    FloatList,
    Int64List,
)
