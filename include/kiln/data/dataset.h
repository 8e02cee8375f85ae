// The input pipeline's data layer: IDX files (the format of MNIST and Fashion-MNIST),
// in-memory datasets of (features, label) examples, and a batcher that walks a dataset in
// fixed-size, optionally shuffled batches.
//
// Every problem with the input (missing, truncated or corrupt files, mismatched counts,
// bad labels, impossible batch sizes) is a kiln::DataError whose message starts with
// "[data] ", names the file or call, says what is wrong and what was expected.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/array.h"

namespace kiln::data {

// ---------------------------------------------------------------------------------------
// IDX files
// ---------------------------------------------------------------------------------------

// The contents of an IDX file with unsigned-byte elements: its extents (outermost first)
// and its row-major payload, numel(dims) bytes.
struct IdxData {
  std::vector<int64_t> dims;
  std::vector<uint8_t> values;
};

// Reads an IDX file, gzip'd or not (zlib reads uncompressed files transparently).
// Layout: magic 0x00 0x00, type byte (only 0x08 = unsigned byte is supported), rank byte
// (1..4), rank big-endian uint32 extents, then the payload and nothing after it.
// Throws DataError for a missing, empty, corrupt or truncated file, a bad header, a
// payload whose size does not match the extents, trailing bytes, or extents totalling
// more than 2^31 elements.
IdxData read_idx(const std::string& path);

// Writes `idx` as an IDX file of unsigned bytes, gzip'd unless `gzip` is false (fixtures,
// exporting subsets). Throws DataError if dims/values are inconsistent or rank is not
// 1..4, SystemError if the file cannot be written.
void write_idx(const std::string& path, const IdxData& idx, bool gzip = true);

// ---------------------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------------------

// N examples held in memory: features f32 [N, D], labels i32 [N].
struct Dataset {
  Array features;
  Array labels;

  // Validates dtypes (f32 features, i32 labels), ranks (2 and 1) and that both have the
  // same number of examples; throws DataError otherwise.
  static Dataset from_memory(Array features, Array labels);

  int64_t size() const { return labels.empty() ? 0 : labels.shape()[0]; }
  int64_t feature_dim() const { return features.empty() ? 0 : features.shape()[1]; }
};

// The first n examples of `ds` (a copy), for quick tests. DataError if n is negative or
// more than ds.size().
Dataset take(const Dataset& ds, int64_t n);

enum class Split { train, test };

// Where the `dataset-fashion-mnist` Debian package installs the files.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Loads Fashion-MNIST from `dir`: {train,t10k}-images-idx3-ubyte.gz and
// {train,t10k}-labels-idx1-ubyte.gz (the names without .gz are accepted too).
// Features are the 28x28 pixels flattened to [N, 784] and scaled to [0,1] (x / 255);
// labels are the class ids 0..9. Throws DataError if the directory or a file is missing
// (naming the package to install), a file is malformed, the images are not rank 3, the
// labels not rank 1, the counts differ, or a label is outside 0..9.
Dataset load_fashion_mnist(const std::string& dir = kDefaultFashionMnistDir,
                           Split split = Split::train);

// Both splits, the test split read on a second thread while the training split is (most
// of a warm start is reading the data). Errors as load_fashion_mnist's, the training
// split's first.
struct FashionMnist {
  Dataset train, test;
};
FashionMnist load_fashion_mnist_splits(const std::string& dir = kDefaultFashionMnistDir);

// ---------------------------------------------------------------------------------------
// Batching
// ---------------------------------------------------------------------------------------

// A feature beyond the first, when an input gives several (a dict of features): fed to
// the graph's placeholder more_feature_name(name).
struct NamedFeature {
  std::string name;
  Array values;
};

// The placeholder a further feature is fed to: "features/<name>" ("features" is the first).
inline std::string more_feature_name(const std::string& name) { return "features/" + name; }

// One batch: features f32 [B, D], labels i32 [B]; inputs with several features carry the
// others in `more`, each with B rows.
struct Batch {
  Array features;
  Array labels;
  std::vector<NamedFeature> more;

  int64_t size() const { return labels.empty() ? 0 : labels.shape()[0]; }
};

struct BatcherOptions {
  int64_t batch_size = 256;
  // Shuffle order of epoch e is a function of (seed, e) only, identical on every machine,
  // so a run resumed at epoch e sees the same batches as an uninterrupted one.
  uint64_t seed = 0;
  bool shuffle = true;
  // Skip the final partial batch of each epoch (keeps every batch the same shape, which
  // a compiled graph with static shapes needs). When false the last batch is smaller.
  bool drop_remainder = true;
  // Walk the dataset once and then report the end, instead of starting a new epoch.
  bool single_pass = false;

  // Endless, shuffled, full batches only: what a training loop wants.
  static BatcherOptions training(int64_t batch_size, uint64_t seed) {
    return {batch_size, seed, true, true, false};
  }
  // One in-order pass over every example, the last batch possibly smaller: evaluation.
  static BatcherOptions evaluation(int64_t batch_size) {
    return {batch_size, 0, false, false, true};
  }
};

// Walks a Dataset in batches. Holds a reference: the dataset must outlive the batcher.
class Batcher {
 public:
  // DataError if the dataset is empty, batch_size <= 0, or batch_size > N while
  // drop_remainder is set (no batch could ever be produced).
  Batcher(const Dataset& data, BatcherOptions options);
  Batcher(Dataset&&, BatcherOptions) = delete;  // would dangle

  // Fills `out` with the next batch and returns true. At the end of an epoch either
  // starts the next one (reshuffled) or, in single-pass mode, returns false and leaves
  // `out` untouched. Reuses out's storage when the shape is unchanged, so a training loop
  // does not allocate per step.
  bool next(Batch& out);

  // Back to the start of epoch 0 (e.g. to evaluate again).
  void reset();

  // Positions the batcher as if next() had been called `batches` times since reset(), in
  // O(1) for drop_remainder batchers (a resumed run continues with the batch an
  // uninterrupted run would have seen). Single-pass batchers past the end stay at the end.
  void seek(int64_t batches);

  // The epoch (0-based) of the batch most recently returned; 0 before the first.
  int64_t epoch() const { return epoch_; }
  // Batches per epoch: floor(N/B) with drop_remainder, ceil(N/B) without.
  int64_t batches_per_epoch() const;
  const BatcherOptions& options() const { return options_; }

 private:
  void start_epoch(int64_t epoch);

  const Dataset& data_;
  BatcherOptions options_;
  std::vector<int64_t> order_;  // example indices in this epoch's order
  int64_t epoch_ = 0;
  int64_t pos_ = 0;  // next position in order_
};

// ---------------------------------------------------------------------------------------
// Batch sources: what an Estimator's input_fn returns
// ---------------------------------------------------------------------------------------

// A stream of batches. next() fills `out` and returns true, or returns false at the end.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual bool next(Batch& out) = 0;
  // Drops the next `batches` batches (a resumed run skips what it already trained on).
  // The default calls next(); sources that can do better override it.
  virtual void skip(int64_t batches);
};

// Batches of a dataset the source shares ownership of (so an input_fn can return it
// without dangling). Throws what Batcher's constructor throws.
std::unique_ptr<BatchSource> batches(std::shared_ptr<const Dataset> data, BatcherOptions options);

// Runs `inner` on a background thread that keeps up to `depth` batches ready, so loading
// and copying overlap the training step. The batches and their order are exactly those of
// `inner` (one producer, FIFO): same seed, same batches. An exception in the producer is
// rethrown by next(). skip() before the first next() is forwarded to inner (O(1) for a
// dataset source). Destroying the prefetcher stops and joins the thread.
std::unique_ptr<BatchSource> prefetch(std::unique_ptr<BatchSource> inner, int depth = 2);

}  // namespace kiln::data
