"""tf.sparse: what kiln holds of sparse tensors (to_dense, of a parsed VarLenFeature)."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src.parsing import sparse_to_dense as to_dense
