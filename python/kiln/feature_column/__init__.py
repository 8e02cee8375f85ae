"""tf.feature_column's dense numeric columns. The names; their code is in kiln._src.feature_column."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.feature_column import (
    NumericColumn,
    Tensor,
    as_dtype,
    bucketized_column,
    cast,
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
    concat,
    convert_to_tensor,
    crossed_column,
    embedding_column,
    float32,
    indicator_column,
    input_layer,
    linear_model,
    make_parse_example_spec,
    numeric_column,
    reshape,
    sequence_numeric_column,
    shared_embedding_columns,
    weighted_categorical_column,
)
