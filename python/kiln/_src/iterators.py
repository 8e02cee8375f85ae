"""TF 1.x iterators over a kiln dataset: make_one_shot_iterator() and
make_initializable_iterator(), as an Estimator's input_fn uses them:

    iterator = dataset.make_one_shot_iterator()      # or tf.data.make_one_shot_iterator(dataset)
    features, labels = iterator.get_next()
    return features, labels

get_next() gives placeholders for the dataset's next batch in the dataset's own form
(features, or a dict of features, and labels); an Estimator that gets them back from
input_fn feeds model_fn from the dataset they came from, exactly as if input_fn had
returned the dataset, and in the form input_fn gave them (`{'images': images}, labels`
repacks the dataset's images into a dict). They cannot be computed with inside input_fn: kiln runs no graph
there (transform the arrays, or do the work in model_fn)."""
from kiln._src.graph import unsupported


class Element:
    """One component of iterator.get_next(): the dataset's next batch of `part`."""

    def __init__(self, iterator, part, path):
        self._iterator = iterator
        self._part = part
        self._path = path  # where in the dataset's batch: (0 features | 1 labels | None the whole, key or None)

    def _as_tensor(self):
        unsupported("computing with iterator.get_next()'s %s inside input_fn" % self._part,
                    "kiln feeds them to model_fn as they come from the dataset: return them from input_fn "
                    "as they are, and do the work in model_fn")

    def __repr__(self):
        return "<kiln iterator.get_next() %s>" % self._part

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        self._as_tensor()


class _NoOp:
    """iterator.initializer: kiln starts the dataset from its beginning for each
    train/evaluate/predict call, so there is nothing to run."""
    name = "iterator_initializer"


class Iterator:
    def __init__(self, dataset, initializable=False):
        self._dataset = dataset
        self._initializable = initializable

    @property
    def initializer(self):
        if not self._initializable:
            raise ValueError("[Iterator.initializer] a one-shot iterator has no initializer; "
                             "use make_initializable_iterator()")
        return _NoOp()

    def get_next(self, name=None):
        keys, has_labels, label_key = self._dataset._parts()
        part = 0 if has_labels else None
        features = Element(self, "features", (part, None))
        if keys is not None:
            features = {k: Element(self, "features['%s']" % k, (part, k)) for k in keys}
        if not has_labels:
            return features
        if label_key is None:
            return features, Element(self, "labels", (1, None))
        return features, {label_key: Element(self, "labels['%s']" % label_key, (1, label_key))}

    def string_handle(self, name=None):
        unsupported("Iterator.string_handle", "kiln feeds one dataset per train/evaluate/predict call")


def _values(result):
    """The leaves of what input_fn returned: (features, labels), each a value or a dict."""
    parts = list(result) if isinstance(result, tuple) else [result]
    return [v for p in parts for v in (p.values() if isinstance(p, dict) else [p])]


def dataset_of(result):
    """The dataset behind what input_fn returned when it is iterator.get_next()'s value
    (or features/labels taken from it), else None."""
    values = _values(result)
    found = [v._iterator for v in values if isinstance(v, Element)]
    if not found:
        return None
    if any(it is not found[0] for it in found) or len(found) != len(values):
        raise TypeError("[input_fn] returned values from different iterators, or an iterator's value beside "
                        "something else; return iterator.get_next() of one dataset as it is")
    return found[0]._dataset


def _form(x):
    """x's structure with each Element as its path (for comparing forms)."""
    if isinstance(x, Element):
        return x._path
    if isinstance(x, dict):
        return {k: _form(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return tuple(_form(v) for v in x)
    return x


def repack_of(result):
    """None when input_fn returned get_next()'s value in the dataset's own form; else a
    function of the dataset's batch giving it in result's form (each Element replaced by
    the batch's value at its path)."""
    if dataset_of(result) is None:
        return None
    if _form(result) == _form(_values(result)[0]._iterator.get_next()):
        return None

    def value(batch, path):
        part, key = path
        v = batch if part is None else batch[part]
        return v if key is None else v[key]

    def repack(batch, x=result):
        if isinstance(x, Element):
            return value(batch, x._path)
        if isinstance(x, dict):
            return {k: repack(batch, v) for k, v in x.items()}
        return tuple(repack(batch, v) for v in x)
    return repack


def make_one_shot_iterator(dataset):
    """tf.data.make_one_shot_iterator / tf.compat.v1.data.make_one_shot_iterator."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    return dataset.make_initializable_iterator()
