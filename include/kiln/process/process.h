// Process-wide settings for programs that train with kiln: the `kiln` command and the
// benchmarks call this first thing in main; a program embedding the library may too.
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

// 1. glibc keeps freed large blocks in the heap (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD), so
//    the buffers a training step allocates and frees are not mapped fresh (page faults,
//    zeroing) every step.
// 2. OpenMP threads spin before they sleep for as long as the machine allows: it samples
//    the CPUs this process may use for 50 ms (/proc/stat; src/process/openmp_wait.h) and
//    sets GOMP_SPINCOUNT=10000 when they are quiet, so a step of many small kernels does
//    not put its threads to sleep and wake them on each one (a ShuffleNet step: 26 -> 35
//    steps/s), or 1000 when other work uses half a CPU or more (over a second 50 ms
//    too), so idle spinning threads do not starve the working ones (libgomp's default
//    300000 starves them either way).
//    libgomp reads the variable when it loads, so this re-executes the program once with
//    it set (argv[0] is found through /proc/self/exe). A user's OMP_WAIT_POLICY or
//    GOMP_SPINCOUNT is left alone, as is any environment with KILN_KEEP_OPENMP_WAIT set.
void tune_process(char** argv);

// The OpenMP wait setting this process runs with, for run records: "GOMP_SPINCOUNT=<n>"
// and/or "OMP_WAIT_POLICY=<p>" (joined by a space), or "libgomp's default".
std::string openmp_wait_setting();

// Point 1 alone, for a process that cannot re-execute itself (the Python module, which
// instead sets GOMP_SPINCOUNT before libgomp loads).
void tune_heap();

// This machine's memory in bytes (physical pages, or the cgroup's memory limit when it is
// lower); 0 if it cannot be told.
int64_t machine_memory_bytes();

}  // namespace kiln
