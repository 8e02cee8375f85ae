"""tf.contrib.image: kiln holds none of its ops (rotate, transform, the YIQ colour ops); its
module paths import, so that a script importing them and using tf.image runs."""
from kiln._src.unsupported import refuse_other_names

__getattr__ = refuse_other_names("tf.contrib.image", "kiln's image ops are tf.image's (kiln.image)")
