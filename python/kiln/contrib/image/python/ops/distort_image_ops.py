"""tf.contrib.image's distort_image_ops (random_hsv_in_yiq, adjust_hsv_in_yiq): not in kiln;
the path imports so that a script importing it and distorting with tf.image runs."""
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names("tensorflow.contrib.image.python.ops.distort_image_ops",
                                 "kiln's colour distortions are tf.image's (adjust_hue, random_saturation, ...)")
