"""tf.image.sample_distorted_bounding_box: the random crop window of Inception-style
training (ResNet, AlexNet, VGG, ... on ImageNet), drawn on the host in a Dataset.map
function as TensorFlow's kernel draws it: up to max_attempts tries of an aspect ratio
and an area within their ranges, kept when the window covers at least
min_object_covered of one of the given boxes, else the whole image. The sampling is
src/data/host_ops/distorted_box.cpp, which the C++ element loop runs too.

Its draws come from a Philox generator keyed by the dataset's seed, the element's
position, the rank and the op's seeds (kiln/_src/map_function.py, Random), so a pipeline is
reproducible from its seed; they are not TensorFlow's draws. The image size usually
comes from extract_jpeg_shape and the window feeds decode_and_crop_jpeg, all on the host.
"""
import numpy as np

from kiln import _core
from kiln._src.map_function import HostValue, Random, host_op


def _check_range(values, name, low_open, high):
    r = [float(v) for v in np.asarray(values, np.float64).reshape(-1)]
    if len(r) != 2 or not (low_open < r[0] <= r[1] <= high):
        raise ValueError("[sample_distorted_bounding_box] %s %s must be [low, high] with %g < low <= high <= %g"
                         % (name, list(values) if np.ndim(values) else values, low_open, high))
    return r


class _Settings:
    def __init__(self, min_object_covered, aspect_ratio_range, area_range, max_attempts,
                 use_image_if_no_bounding_boxes):
        self.covered = float(np.asarray(min_object_covered).reshape(-1)[0])
        if not 0.0 <= self.covered <= 1.0:
            raise ValueError("[sample_distorted_bounding_box] min_object_covered %r must be in [0, 1]"
                             % (min_object_covered,))
        self.aspect = _check_range(aspect_ratio_range, "aspect_ratio_range", 0.0, np.inf)
        self.area = _check_range(area_range, "area_range", 0.0, 1.0)
        self.attempts = int(max_attempts)
        if self.attempts < 1:
            raise ValueError("[sample_distorted_bounding_box] max_attempts %d must be >= 1" % self.attempts)
        self.use_image = bool(use_image_if_no_bounding_boxes)

    def attrs(self):
        return {"covered": self.covered, "aspect": self.aspect, "area": self.area, "attempts": self.attempts,
                "use_image": self.use_image}


def _sample(image_size, bounding_boxes, rng, settings):
    size = np.asarray(image_size)
    if size.dtype.kind not in "iu":
        raise TypeError("[sample_distorted_bounding_box] image_size is %s; it is integers [height, width, channels]"
                        % size.dtype)
    return _core.sample_distorted_box(np.ascontiguousarray(size), np.ascontiguousarray(bounding_boxes, np.float32),
                                      rng._draws, settings.attrs())


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes): begin [offset_y, offset_x, 0] and size [height, width, -1]
    for tf.slice or decode_and_crop_jpeg, and the window as a box [1, 1, 4]."""
    settings = _Settings(min_object_covered, [0.75, 1.33] if aspect_ratio_range is None else aspect_ratio_range,
                         [0.05, 1.0] if area_range is None else area_range,
                         100 if max_attempts is None else max_attempts, use_image_if_no_bounding_boxes)
    op_seed = None if seed is None and seed2 is None else (int(seed or 0) << 31) ^ int(seed2 or 0)
    native = None
    if isinstance(image_size, HostValue) and isinstance(bounding_boxes, HostValue):
        native = ("distorted_box", settings.attrs())
    return host_op("sample_distorted_bounding_box", lambda s, b, rng: _sample(s, b, rng, settings),
                   image_size, bounding_boxes, Random(op_seed), keep=True, native=native)


def sample_distorted_bounding_box_v2(image_size, bounding_boxes, seed=0, min_object_covered=0.1,
                                     aspect_ratio_range=None, area_range=None, max_attempts=None,
                                     use_image_if_no_bounding_boxes=None, name=None):
    return sample_distorted_bounding_box(image_size, bounding_boxes, seed or None, None, min_object_covered,
                                         aspect_ratio_range, area_range, max_attempts,
                                         use_image_if_no_bounding_boxes, name)

