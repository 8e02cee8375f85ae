// Batch sources over Python input, for the Estimator's input_fn.
//
// SliceSource: kiln.data.Dataset.from_tensor_slices over numpy arrays. It reads the
// arrays in place (no copy of the data set), gathers each batch's rows in C++ and runs on
// the prefetch thread, so training calls no Python per step. Shuffling is a seeded
// permutation of each whole epoch (the one kiln's own Batcher uses), so a resumed run
// skips to the batch an uninterrupted run would have seen in O(1).
//
// IterableSource: any Python iterable of (features, labels) numpy tuples. Each next()
// takes the GIL, calls `next_batch` (the Python side: advance the iterator, check and
// convert the arrays) and copies the arrays into kiln's batch.
#pragma once
#include <pybind11/numpy.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/data/dataset.h"

namespace kiln::python {

// How the examples are ordered and grouped (no Python objects: a source keeps this
// without the GIL).
struct SliceOrder {
  int64_t batch_size = 1;
  bool drop_remainder = false;
  bool shuffle = false;
  uint64_t seed = 0;
  int64_t epochs = 1;               // -1: forever
  bool repeat_before_batch = false;  // repeat().batch(): batches run across epochs
};

struct SliceSpec {
  pybind11::array features;
  pybind11::object labels;  // a numpy array, or None
  // Further features by name (a dict of several; `features` is the first), as many rows each.
  std::vector<std::pair<std::string, pybind11::array>> more;
  SliceOrder order;
  int prefetch = 0;  // batches kept ready by a background thread; 0: none
};

// The numpy arrays kept alive for the source (released under the GIL).
struct HeldArrays;

class SliceSource : public data::BatchSource {
 public:
  explicit SliceSource(const SliceSpec& spec);  // with the GIL held
  ~SliceSource() override;
  bool next(data::Batch& out) override;
  void skip(int64_t batches) override;

  // One array read in place: its rows, and how to copy one.
  struct Column {
    const std::byte* data = nullptr;
    DType dtype = DType::f32;
    Shape row;
    size_t row_bytes = 0;
    void gather(const std::vector<int64_t>& rows, Array& out) const;  // reuses out when it fits
  };

 private:
  bool advance_epoch();
  std::shared_ptr<HeldArrays> held_;
  Column features_, labels_;  // labels_.data null: none
  std::vector<std::pair<std::string, Column>> more_;
  int64_t n_ = 0;
  SliceOrder spec_;
  std::vector<int64_t> order_;
  int64_t epoch_ = 0, pos_ = 0;
  bool ended_ = false;
};

class IterableSource : public data::BatchSource {
 public:
  explicit IterableSource(pybind11::object next_batch) : next_batch_(std::move(next_batch)) {}
  ~IterableSource() override;
  bool next(data::Batch& out) override;

 private:
  pybind11::object next_batch_;
};

}  // namespace kiln::python
