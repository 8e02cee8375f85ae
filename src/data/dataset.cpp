// In-memory datasets: validation of user-supplied arrays and prefix subsets.
#include <cstring>

#include "kiln/data/dataset.h"
#include "kiln/base/error.h"

namespace kiln::data {

Dataset Dataset::from_memory(Array features, Array labels) {
  if (features.empty() || labels.empty())
    KILN_THROW(DataError) << "[data] Dataset::from_memory: " << (features.empty() ? "features" : "labels")
                          << " array is empty (expected allocated arrays)";
  if (features.dtype() != DType::f32 || features.shape().size() != 2)
    KILN_THROW(DataError) << "[data] Dataset::from_memory: features are "
                          << dtype_name(features.dtype()) << " " << shape_str(features.shape())
                          << " (expected f32 [N, D])";
  if (labels.dtype() != DType::i32 || labels.shape().size() != 1)
    KILN_THROW(DataError) << "[data] Dataset::from_memory: labels are "
                          << dtype_name(labels.dtype()) << " " << shape_str(labels.shape())
                          << " (expected i32 [N])";
  if (features.shape()[0] != labels.shape()[0])
    KILN_THROW(DataError) << "[data] Dataset::from_memory: features have "
                          << features.shape()[0] << " examples but labels have "
                          << labels.shape()[0] << " (expected the same count)";
  return Dataset{std::move(features), std::move(labels)};
}

Dataset take(const Dataset& ds, int64_t n) {
  if (n < 0 || n > ds.size())
    KILN_THROW(DataError) << "[data] take: cannot take " << n << " examples from a dataset of "
                          << ds.size() << " (expected 0.." << ds.size() << ")";
  const int64_t d = ds.feature_dim();
  Dataset out{Array(DType::f32, {n, d}), Array(DType::i32, {n})};
  // Examples are rows of a row-major array, so a prefix is one contiguous block.
  if (n) {
    std::memcpy(out.features.bytes(), ds.features.bytes(), static_cast<size_t>(n * d) * sizeof(float));
    std::memcpy(out.labels.bytes(), ds.labels.bytes(), static_cast<size_t>(n) * sizeof(int32_t));
  }
  return out;
}

}  // namespace kiln::data
