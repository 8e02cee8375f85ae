"""tf.io: TFRecord files, Example parsing, image decoding and encoding, and gfile."""
# ruff: noqa: F401, A004
# (a package of names: each is imported to be re-exported, some shadowing builtins as TensorFlow's do)
from kiln._src import gfile
from kiln._src.image import (
                             decode_and_crop_jpeg,
                             decode_image,
                             decode_jpeg,
                             decode_png,
                             encode_jpeg,
                             encode_png,
                             extract_jpeg_shape,
)
from kiln._src.parsing import (
                             FixedLenFeature,
                             FixedLenSequenceFeature,
                             VarLenFeature,
                             decode_raw,
                             parse_example,
                             parse_single_example,
)
from kiln._src.records import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator
from kiln._src.summary import write_graph
