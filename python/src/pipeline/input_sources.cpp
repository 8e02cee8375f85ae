#include "input_sources.h"

#include <cstring>
#include <numeric>

#include "data/shuffle.h"
#include "kiln/error.h"
#include "numpy_array.h"

namespace py = pybind11;

namespace kiln::python {

struct HeldArrays {
  py::object features, labels;
  ~HeldArrays() {
    py::gil_scoped_acquire gil;
    features = py::object();
    labels = py::object();
  }
};

namespace {
Shape row_shape(const py::array& a) { return Shape(a.shape() + 1, a.shape() + a.ndim()); }
}  // namespace

SliceSource::SliceSource(const SliceSpec& spec) : spec_(spec.order) {
  held_ = std::make_shared<HeldArrays>();
  held_->features = spec.features;
  held_->labels = spec.labels;
  const py::array& f = spec.features;
  feature_dtype_ = dtype_of(f, "features");
  features_ = static_cast<const std::byte*>(f.data());
  feature_row_ = row_shape(f);
  feature_row_bytes_ = static_cast<size_t>(numel(feature_row_)) * dtype_size(feature_dtype_);
  n_ = f.shape(0);
  if (!spec.labels.is_none()) {
    const py::array l = spec.labels.cast<py::array>();
    label_dtype_ = dtype_of(l, "labels");
    labels_ = static_cast<const std::byte*>(l.data());
    label_row_ = row_shape(l);
    label_row_bytes_ = static_cast<size_t>(numel(label_row_)) * dtype_size(label_dtype_);
  }
  order_.resize(static_cast<size_t>(n_));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (spec_.shuffle) data::shuffle_indices(order_, spec_.seed, 0);
}

SliceSource::~SliceSource() = default;

bool SliceSource::advance_epoch() {
  if (spec_.epochs >= 0 && epoch_ + 1 >= spec_.epochs) {
    ended_ = true;
    return false;
  }
  ++epoch_;
  pos_ = 0;
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (spec_.shuffle) data::shuffle_indices(order_, spec_.seed, static_cast<uint64_t>(epoch_));
  return true;
}

void SliceSource::gather(int64_t row, int64_t at, data::Batch& out) const {
  std::memcpy(out.features.bytes() + at * feature_row_bytes_, features_ + row * feature_row_bytes_, feature_row_bytes_);
  if (labels_)
    std::memcpy(out.labels.bytes() + at * label_row_bytes_, labels_ + row * label_row_bytes_, label_row_bytes_);
}

bool SliceSource::next(data::Batch& out) {
  if (ended_) return false;
  const int64_t b = spec_.batch_size;
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(b));
  if (spec_.repeat_before_batch) {
    while (static_cast<int64_t>(rows.size()) < b) {
      if (pos_ == n_ && !advance_epoch()) break;
      rows.push_back(order_[static_cast<size_t>(pos_++)]);
    }
    if (rows.empty() || (spec_.drop_remainder && static_cast<int64_t>(rows.size()) < b)) return ended_ = true, false;
  } else {
    const int64_t need = spec_.drop_remainder ? b : 1;
    if (n_ - pos_ < need && !advance_epoch()) return false;
    const int64_t take = std::min(b, n_ - pos_);
    for (int64_t i = 0; i < take; ++i) rows.push_back(order_[static_cast<size_t>(pos_++)]);
  }
  const int64_t size = static_cast<int64_t>(rows.size());
  Shape fs{size};
  fs.insert(fs.end(), feature_row_.begin(), feature_row_.end());
  if (out.features.empty() || out.features.dtype() != feature_dtype_ || out.features.shape() != fs)
    out.features = Array::uninitialized(feature_dtype_, fs);
  if (labels_) {
    Shape ls{size};
    ls.insert(ls.end(), label_row_.begin(), label_row_.end());
    if (out.labels.empty() || out.labels.dtype() != label_dtype_ || out.labels.shape() != ls)
      out.labels = Array::uninitialized(label_dtype_, ls);
  } else {
    out.labels = Array();
  }
  for (int64_t i = 0; i < size; ++i) gather(rows[static_cast<size_t>(i)], i, out);
  return true;
}

void SliceSource::skip(int64_t batches) {
  if (batches <= 0) return;
  const int64_t b = spec_.batch_size;
  // Where the source would stand after `batches` batches, computed directly.
  int64_t epoch = 0, pos = 0;
  if (spec_.repeat_before_batch) {
    const int64_t p = pos_ + epoch_ * n_ + batches * b;  // examples consumed
    epoch = p / n_;
    pos = p % n_;
    if (pos == 0 && epoch > 0) --epoch, pos = n_;  // stay at the end of the epoch just finished
  } else {
    const int64_t per_epoch = spec_.drop_remainder ? n_ / b : (n_ + b - 1) / b;
    const int64_t done = epoch_ * per_epoch + (pos_ + b - 1) / b + batches;
    epoch = (done - 1) / per_epoch;
    pos = std::min(n_, (done - epoch * per_epoch) * b);
  }
  if (spec_.epochs >= 0 && epoch >= spec_.epochs) {
    ended_ = true;
    return;
  }
  epoch_ = epoch;
  pos_ = pos;
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (spec_.shuffle) data::shuffle_indices(order_, spec_.seed, static_cast<uint64_t>(epoch_));
}

IterableSource::~IterableSource() {
  py::gil_scoped_acquire gil;
  next_batch_ = py::object();
}

bool IterableSource::next(data::Batch& out) {
  py::gil_scoped_acquire gil;
  const py::object item = next_batch_();
  if (item.is_none()) return false;
  const py::tuple pair = item.cast<py::tuple>();
  out.features = to_array(pair[0].cast<py::array>(), "features");
  out.labels = pair[1].is_none() ? Array() : to_array(pair[1].cast<py::array>(), "labels");
  return true;
}

}  // namespace kiln::python
