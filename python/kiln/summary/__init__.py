"""tf.summary (TensorFlow 1's graph summaries) in a model_fn. The names; their code is in
kiln._src.summary."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.summary import (
    FileWriter,
    FileWriterCache,
    Summary,
    audio,
    convert_to_tensor,
    current,
    histogram,
    histogram_value,
    image,
    image_values,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
    write_values,
)
