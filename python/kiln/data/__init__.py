"""tf.data, TensorFlow 1.x's names; their code is in kiln._src.data."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src import threadpool  # tensorflow.python.data.experimental.ops.threadpool
from kiln._src.data import (
    AUTOTUNE,
    MAX_BATCH,
    MAX_PREFETCH,
    BatchReader,
    DataError,
    Dataset,
    GeneratorDataset,
    Iterator,
    MapFunction,
    TensorSpec,
    TFRecordDataset,
    as_dtype,
    load_fashion_mnist,
    make_initializable_iterator,
    make_one_shot_iterator,
    shuffle_and_repeat,
)
from kiln._src.threadpool import Options, ThreadingOptions
from kiln.data import experimental
