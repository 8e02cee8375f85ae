"""tf.feature_column's dense numeric columns: numeric_column and input_layer, as TensorFlow
1.x builds a model's input from a dict of features (each column's feature reshaped to
[batch, elements], cast to float32, normalised if asked, the columns concatenated in the
order of their names). Columns that need vocabularies, hashing or embeddings are refused
with a clear error: kiln's input is dense arrays."""
import numbers

from kiln._src.dtypes import as_dtype, float32
from kiln._src.graph import Tensor, cast, concat, convert_to_tensor, reshape, unsupported


class NumericColumn:
    """What numeric_column returns (TensorFlow's NumericColumn fields)."""

    def __init__(self, key, shape, default_value, dtype, normalizer_fn):
        self.key, self.shape, self.default_value, self.dtype, self.normalizer_fn = (key, shape, default_value, dtype,
                                                                                     normalizer_fn)

    @property
    def name(self):
        return self.key

    @property
    def elements(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __repr__(self):
        return "NumericColumn(key=%r, shape=%r, dtype=%s)" % (self.key, self.shape, self.dtype.name)


def numeric_column(key, shape=(1,), default_value=None, dtype=float32, normalizer_fn=None):
    """tf.feature_column.numeric_column: the feature `key`, of `shape` per example."""
    if not isinstance(key, str) or not key:
        raise ValueError("[numeric_column] key must be a non-empty string, not %r" % (key,))
    dims = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if not dims or any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1 for d in dims):
        raise ValueError("[numeric_column] '%s': shape %r must be positive integers" % (key, shape))
    dtype = as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise ValueError("[numeric_column] '%s': dtype must be a float or integer type, not %s" % (key, dtype.name))
    if default_value is not None:
        unsupported("numeric_column(default_value=...)", "kiln's input has no missing values; fill them first")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError("[numeric_column] '%s': normalizer_fn must be callable" % key)
    return NumericColumn(key, tuple(int(d) for d in dims), None, dtype, normalizer_fn)


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """tf.feature_column.input_layer: the dense [batch, sum of elements] float32 input of the
    columns, in the order of their names (as TensorFlow orders them)."""
    if isinstance(feature_columns, NumericColumn):
        feature_columns = [feature_columns]
    columns = list(feature_columns)
    if not columns:
        raise ValueError("[input_layer] feature_columns is empty")
    for c in columns:
        if not isinstance(c, NumericColumn):
            raise TypeError("[input_layer] %r is not a column kiln provides (numeric_column)" % (c,))
    if isinstance(features, Tensor):
        if len(columns) != 1:
            raise ValueError("[input_layer] features is one tensor, but there are %d columns" % len(columns))
        features = {columns[0].key: features}
    if not isinstance(features, dict):
        raise TypeError("[input_layer] features must be a dict of feature name to tensor, not %s"
                        % type(features).__name__)
    parts = []
    for c in sorted(columns, key=lambda c: c.name):
        if c.key not in features:
            raise ValueError("[input_layer] the features have no '%s' (they have: %s)"
                             % (c.key, ", ".join(sorted(map(str, features)))))
        x = convert_to_tensor(features[c.key])
        per_example = 1
        for d in x.shape.as_list()[1:]:
            per_example *= d
        if x.shape.ndims < 1 or per_example != c.elements:
            raise ValueError("[input_layer] feature '%s' has shape %s: %d values per example, but its column's shape "
                             "%s holds %d" % (c.key, x.shape.as_list(), per_example, list(c.shape), c.elements))
        x = cast(x, float32)
        if c.normalizer_fn is not None:
            x = c.normalizer_fn(x)
        parts.append(reshape(x, [-1, c.elements]))
    return parts[0] if len(parts) == 1 else concat(parts, axis=1)


def _refused(name):
    def refuse(*args, **kwargs):
        unsupported("feature_column." + name, "kiln's input is dense arrays: encode this feature as numbers "
                    "in input_fn and use numeric_column")
    refuse.__name__ = name
    return refuse


for _name in ("categorical_column_with_vocabulary_list", "categorical_column_with_vocabulary_file",
              "categorical_column_with_hash_bucket", "categorical_column_with_identity", "bucketized_column",
              "crossed_column", "embedding_column", "shared_embedding_columns", "indicator_column",
              "weighted_categorical_column", "sequence_numeric_column", "linear_model", "make_parse_example_spec"):
    globals()[_name] = _refused(_name)
del _name
