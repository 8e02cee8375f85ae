// kiln::Array <-> numpy. Arrays handed to kiln must already be C-contiguous and of a
// dtype kiln has (the Python side converts and names what is wrong before this).
#pragma once
#include <pybind11/numpy.h>

#include "kiln/ir/array.h"

namespace kiln::python {

// float32, float16, int32, int64 or bool -> kiln's dtype; TypeError naming `what` otherwise.
DType dtype_of(const pybind11::array& a, const char* what);
// A copy of a C-contiguous numpy array.
Array to_array(const pybind11::array& a, const char* what);
// A numpy copy (bfloat16, which numpy lacks, as float32).
pybind11::array to_numpy(const Array& a);
// A numpy array that owns `a` (no copy); bfloat16 is copied to float32.
pybind11::array into_numpy(Array&& a);

}  // namespace kiln::python
