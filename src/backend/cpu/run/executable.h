// A compiled step, ready to run: the schedule it was generated from and the loaded shared
// object. It only runs steps; compile_cpu() (compile.cpp) builds it.
#pragma once
#include <memory>
#include <string>

#include "backend/cpu/run/loader.h"
#include "backend/cpu/schedule/schedule.h"
#include "kiln/backend/runtime.h"

namespace kiln::cpu {

// Runs `object` (generated from `schedule`) one step per run(): fills the buffer table
// from the feeds, the variables and the arena, calls kiln_step, then applies the assigns
// that were not written in place. With a non-empty `profile_title`, times every step and
// prints the table (titled so, `profile_rows` rows) to stderr when destroyed.
std::unique_ptr<Executable> make_compiled_executable(Schedule schedule, std::unique_ptr<SharedObject> object,
                                                     const std::string& profile_title = "", int profile_rows = 25);

}  // namespace kiln::cpu
