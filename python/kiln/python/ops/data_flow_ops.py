"""tensorflow.python.ops.data_flow_ops: queues and staging areas, which kiln's input pipelines
(tf.data) replace: no name of it is provided."""
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names('tensorflow.python.ops.data_flow_ops', "its queues and staging areas are TensorFlow 1.x's input pipelines; kiln's are tf.data's (kiln.data.Dataset, TFRecordDataset)")
