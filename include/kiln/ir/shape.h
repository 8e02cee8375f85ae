// Static shapes: a list of extents, outermost first. A scalar has rank 0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& s);
// "[256,784]"; "[]" for a scalar.
std::string shape_str(const Shape& s);
// Row-major strides in elements.
std::vector<int64_t> strides_of(const Shape& s);
// NumPy broadcasting of two shapes; throws GraphError naming `context` if incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& context);

}  // namespace kiln
