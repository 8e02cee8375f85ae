// Feature specs as kiln/_src/parsing.py passes them: (key, "fixed"|"var"|"sequence",
// "float32"|"int64"|"string", shape, default numbers or None, default bytes or None) each.
#pragma once
#include <pybind11/pybind11.h>

#include <vector>

#include "formats/example.h"

namespace kiln::python {

std::vector<formats::FeatureSpec> feature_specs(const pybind11::list& specs);

}  // namespace kiln::python
