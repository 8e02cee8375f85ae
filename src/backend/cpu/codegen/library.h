// Calls from generated code into oneDNN through the Runtime (abi.h): see codegen/library.cpp.
#pragma once
#include <string>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// The statements of the library step st (step number `index`): rt->matmul or rt->conv
// with the step's buffers, shapes and epilogue.
std::string library_call(const Schedule& s, const Step& st, size_t index);

}  // namespace kiln::cpu
