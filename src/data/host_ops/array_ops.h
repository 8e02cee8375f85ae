// The numpy operations that shape code in a Dataset.map function applies to small host
// values (a JPEG's shape, bounding boxes, a crop window): what kiln/_src/graph.py records on
// the host for expand_dims, squeeze, reshape, transpose, concat, stack, unstack and cast,
// in C++ for the element loop (data/element_plan.h). Axes count from the end when
// negative, as numpy's; an axis or shape that does not fit is a ConfigError naming it.
#pragma once
#include <cstdint>
#include <vector>

#include "data/host_value.h"

namespace kiln::data {

HostValue expand_dims(const HostValue& x, int64_t axis);
HostValue squeeze(const HostValue& x, const std::vector<int64_t>& axes);  // empty: every axis of extent 1
HostValue reshape(const HostValue& x, std::vector<int64_t> shape);        // at most one -1
HostValue transpose(const HostValue& x, std::vector<int64_t> perm);       // empty: the axes reversed
HostValue concat(const std::vector<const HostValue*>& xs, int64_t axis);
HostValue stack(const std::vector<const HostValue*>& xs, int64_t axis);
std::vector<HostValue> unstack(const HostValue& x, int64_t axis);

}  // namespace kiln::data
