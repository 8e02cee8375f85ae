// Refusing, before allocating, what this machine cannot hold.
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

// ConfigError "[memory] <what> needs <N> GiB, more than this machine's <M> GiB" when
// `bytes` exceed the machine's memory (kiln/process/process.h machine_memory_bytes): checked
// before a large allocation, so that a setting the machine cannot hold is refused with
// its size instead of an out-of-memory kill (or std::bad_alloc) in the middle of the run.
void check_fits_in_memory(int64_t bytes, const std::string& what);

}  // namespace kiln
