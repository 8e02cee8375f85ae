// Variables updated in place by the CPU schedule (make_schedule, schedule.cpp).
#pragma once
#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// Marks the new value of an assign as written straight into the variable's storage
// (BufferKind::variable_in_place) when that is safe: the value is computed by an
// elementwise loop over as many elements as the variable has, the loop reads the old
// value only at the index it writes, no later step reads the old value, and the variable
// is not itself an output. Generated loops load everything an iteration needs before
// they store (codegen.cpp), so the loop that overwrites the variable still reads its old
// value correctly. Other assigned values are copied into the variables after the step.
void write_assigns_in_place(Schedule& s);

}  // namespace kiln::cpu
