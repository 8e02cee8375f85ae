// Subnormal floats in a step: flushed to zero, as TensorFlow's CPU threads do.
//
// A subnormal operand costs an x86 core a microcode assist of about a hundred cycles, in
// oneDNN's kernels as in kiln's loops; training produces them (a softmax over many unused
// classes sends their gradients through 1e-40 on the way to zero) and then runs slower
// step after step with no change in what it learns. While a FlushDenormals lives, the
// calling thread and the OpenMP team it starts treat subnormal inputs as zero (DAZ) and
// flush subnormal results to zero (FTZ); the calling thread gets its own mode back at the
// end, so the caller's other code (numpy in a Python process) keeps IEEE subnormals. The
// team's threads keep the mode: they run kiln's and oneDNN's work. Both executables, the
// interpreter and compiled steps, run under it, so they still agree bit for bit.
// KILN_FLUSH_DENORMALS=0 keeps IEEE subnormals everywhere (any other value than 0 or 1
// is an error naming the variable).
#pragma once

namespace kiln {

// Whether steps flush subnormals (KILN_FLUSH_DENORMALS, read once; default yes).
bool flush_denormals();

class FlushDenormals {
 public:
  FlushDenormals();
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_ = 0;
  bool active_ = false;
};

}  // namespace kiln
