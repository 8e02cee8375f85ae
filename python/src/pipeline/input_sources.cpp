#include "input_sources.h"

#include <cstring>
#include <numeric>

#include "data/shuffle.h"
#include "kiln/base/error.h"
#include "numpy_array.h"

namespace py = pybind11;

namespace kiln::python {

struct HeldArrays {
  std::vector<py::object> arrays;
  ~HeldArrays() {
    py::gil_scoped_acquire gil;
    arrays.clear();
  }
};

namespace {
SliceSource::Column column_of(const py::array& a, const std::string& what, HeldArrays& held) {
  held.arrays.push_back(a);
  SliceSource::Column c;
  c.dtype = dtype_of(a, what.c_str());
  c.data = static_cast<const std::byte*>(a.data());
  c.row = Shape(a.shape() + 1, a.shape() + a.ndim());
  c.row_bytes = static_cast<size_t>(numel(c.row)) * dtype_size(c.dtype);
  return c;
}
}  // namespace

void SliceSource::Column::gather(const std::vector<int64_t>& rows, Array& out) const {
  Shape shape{static_cast<int64_t>(rows.size())};
  shape.insert(shape.end(), row.begin(), row.end());
  if (out.empty() || out.dtype() != dtype || out.shape() != shape) out = Array::uninitialized(dtype, shape);
  std::byte* to = out.bytes();
  for (size_t i = 0; i < rows.size(); ++i) std::memcpy(to + i * row_bytes, data + rows[i] * row_bytes, row_bytes);
}

SliceSource::SliceSource(const SliceSpec& spec) : spec_(spec.order) {
  held_ = std::make_shared<HeldArrays>();
  features_ = column_of(spec.features, "features", *held_);
  n_ = spec.features.shape(0);
  if (!spec.labels.is_none()) labels_ = column_of(spec.labels.cast<py::array>(), "labels", *held_);
  for (const auto& [name, a] : spec.more) {
    if (a.ndim() == 0 || a.shape(0) != n_)
      throw py::value_error("[Dataset] feature '" + name + "' has " + std::to_string(a.ndim() ? a.shape(0) : 0) +
                            " rows but the first feature " + std::to_string(n_) + ": every feature needs one row per example");
    more_.emplace_back(name, column_of(a, "feature '" + name + "'", *held_));
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
  features_.gather(rows, out.features);
  if (labels_.data) labels_.gather(rows, out.labels);
  else out.labels = Array();
  out.more.resize(more_.size());
  for (size_t k = 0; k < more_.size(); ++k) {
    out.more[k].name = more_[k].first;
    more_[k].second.gather(rows, out.more[k].values);
  }
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
  // (features, labels[, [(name, array), ...] further features])
  const py::tuple parts = item.cast<py::tuple>();
  out.features = to_array(parts[0].cast<py::array>(), "features");
  out.labels = parts[1].is_none() ? Array() : to_array(parts[1].cast<py::array>(), "labels");
  out.more.clear();
  if (parts.size() > 2)
    for (const py::handle entry : parts[2]) {
      const py::tuple named = entry.cast<py::tuple>();
      const std::string name = named[0].cast<std::string>();
      out.more.push_back({name, to_array(named[1].cast<py::array>(), ("feature '" + name + "'").c_str())});
    }
  return true;
}

}  // namespace kiln::python
