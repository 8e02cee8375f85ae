"""tf.image.sample_distorted_bounding_box: the random crop window of Inception-style
training (ResNet, AlexNet, VGG, ... on ImageNet), drawn on the host in a Dataset.map
function as TensorFlow's kernel draws it: up to max_attempts tries of an aspect ratio
and an area within their ranges, kept when the window covers at least
min_object_covered of one of the given boxes, else the whole image.

Its draws come from a Philox generator keyed by the dataset's seed, the element's
position, the rank and the op's seeds (kiln/_map_function.py, Random), so a pipeline is
reproducible from its seed; they are not TensorFlow's draws. The image size usually
comes from extract_jpeg_shape and the window feeds decode_and_crop_jpeg, all on the host.
"""
import numpy as np

from ._map_function import Random, host_op


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


def _random_crop(rng, width, height, min_area, max_area, aspect):
    """(x, y, w, h) of a window of that aspect ratio and an area in [min_area, max_area],
    or None: TensorFlow's GenerateRandomCrop, rounding included."""
    h = int(np.rint(np.sqrt(min_area / aspect)))
    max_h = int(np.rint(np.sqrt(max_area / aspect)))
    if np.rint(max_h * aspect) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)  # the largest height whose rounded width fits
        if np.rint(max_h * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += int(rng.integers(0, max_h - h + 1))
    w = int(np.rint(h * aspect))
    area = w * h
    if area < min_area:
        h += 1
        w = int(np.rint(h * aspect))
        area = w * h
    if area < min_area:
        return None
    if area > max_area:
        h -= 1
        w = int(np.rint(h * aspect))
        area = w * h
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(rng.integers(0, height - h)) if h < height else 0  # TensorFlow's draw: [0, height - h)
    x = int(rng.integers(0, width - w)) if w < width else 0
    return x, y, w, h


def _covers(window, boxes, fraction):
    x, y, w, h = window
    if w * h < 1:
        return False
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area < 1:
            continue
        iw = max(0, min(x + w, bx1) - max(x, bx0))
        ih = max(0, min(y + h, by1) - max(y, by0))
        if iw * ih / area >= fraction:
            return True
    return False


def _sample(image_size, bounding_boxes, rng, settings):
    size = np.asarray(image_size).reshape(-1)
    if size.dtype.kind not in "iu":
        raise TypeError("[sample_distorted_bounding_box] image_size is %s; it is integers [height, width, channels]"
                        % size.dtype)
    if size.size != 3 or size[0] < 1 or size[1] < 1:
        raise ValueError("[sample_distorted_bounding_box] image_size %s must be [height, width, channels] with a "
                         "height and width >= 1" % (size.tolist(),))
    height, width = int(size[0]), int(size[1])
    boxes = np.asarray(bounding_boxes, np.float32)
    if boxes.size and (boxes.ndim != 3 or boxes.shape[-1] != 4):
        raise ValueError("[sample_distorted_bounding_box] bounding_boxes of shape %s: it is [batch, boxes, 4] "
                         "(ymin, xmin, ymax, xmax)" % (boxes.shape,))
    boxes = boxes.reshape(-1, 4)
    if ((boxes < 0) | (boxes > 1)).any():
        raise ValueError("[sample_distorted_bounding_box] every bounding box coordinate must be in [0, 1]; got %s"
                         % boxes.tolist())
    rects = [(int(b[1] * width), int(b[0] * height), int(b[3] * width), int(b[2] * height)) for b in boxes]
    if not rects:
        if not settings.use_image:
            raise ValueError("[sample_distorted_bounding_box] no bounding boxes were given; pass "
                             "use_image_if_no_bounding_boxes=True to use the whole image as the box")
        rects = [(0, 0, width, height)]
    min_area, max_area = settings.area[0] * width * height, settings.area[1] * width * height
    window = None
    for _ in range(settings.attempts):
        aspect = rng.random(dtype=np.float32) * (settings.aspect[1] - settings.aspect[0]) + settings.aspect[0]
        crop = _random_crop(rng, width, height, min_area, max_area, float(aspect))
        if crop is not None and _covers(crop, rects, settings.covered):
            window = crop
            break
    x, y, w, h = window if window is not None else (0, 0, width, height)
    begin = np.array([y, x, 0], size.dtype)
    extent = np.array([h, w, -1], size.dtype)
    box = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], np.float32)
    return begin, extent, box


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes): begin [offset_y, offset_x, 0] and size [height, width, -1]
    for tf.slice or decode_and_crop_jpeg, and the window as a box [1, 1, 4]."""
    settings = _Settings(min_object_covered, [0.75, 1.33] if aspect_ratio_range is None else aspect_ratio_range,
                         [0.05, 1.0] if area_range is None else area_range,
                         100 if max_attempts is None else max_attempts, use_image_if_no_bounding_boxes)
    op_seed = None if seed is None and seed2 is None else (int(seed or 0) << 31) ^ int(seed2 or 0)
    return host_op("sample_distorted_bounding_box", lambda s, b, rng: _sample(s, b, rng, settings),
                   image_size, bounding_boxes, Random(op_seed), keep=True)


def sample_distorted_bounding_box_v2(image_size, bounding_boxes, seed=0, min_object_covered=0.1,
                                     aspect_ratio_range=None, area_range=None, max_attempts=None,
                                     use_image_if_no_bounding_boxes=None, name=None):
    return sample_distorted_bounding_box(image_size, bounding_boxes, seed or None, None, min_object_covered,
                                         aspect_ratio_range, area_range, max_attempts,
                                         use_image_if_no_bounding_boxes, name)

