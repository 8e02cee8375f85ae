#include "backend/denormals.h"
#include "kiln/base/settings.h"

#include <cstdlib>
#include <string>

#include <omp.h>

#include "kiln/base/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define KILN_HAS_MXCSR 1
#endif

namespace kiln {
namespace {

#ifdef KILN_HAS_MXCSR
constexpr unsigned kFlushToZero = 0x8000;     // MXCSR.FTZ: subnormal results become zero
constexpr unsigned kDenormalsAreZero = 0x40;  // MXCSR.DAZ: subnormal inputs read as zero
constexpr unsigned kModes = kFlushToZero | kDenormalsAreZero;
#endif

bool from_environment() {
  const std::string s = setting_text("KILN_FLUSH_DENORMALS");
  if (s.empty() || s == "1") return true;
  if (s == "0") return false;
  KILN_THROW(ConfigError) << "[KILN_FLUSH_DENORMALS] '" << s
                          << "' is not valid: give 1 (flush subnormal floats to zero in steps, the default) or 0 "
                             "(keep IEEE subnormals)";
}

}  // namespace

bool flush_denormals() {
  static const bool flush = from_environment();
  return flush;
}

FlushDenormals::FlushDenormals() {
#ifdef KILN_HAS_MXCSR
  if (!flush_denormals()) return;
  saved_ = _mm_getcsr();
  active_ = true;
  _mm_setcsr(saved_ | kModes);
  // The team this thread starts: its threads outlive the step and keep the mode, so it
  // is set once per team size (a larger team brings new threads).
  thread_local int team = 0;
  if (const int threads = omp_get_max_threads(); threads != team) {
#pragma omp parallel
    _mm_setcsr(_mm_getcsr() | kModes);
    team = threads;
  }
#endif
}

FlushDenormals::~FlushDenormals() {
#ifdef KILN_HAS_MXCSR
  // The two modes as they were; exception flags the step raised stay raised.
  if (active_) _mm_setcsr((_mm_getcsr() & ~kModes) | (saved_ & kModes));
#endif
}

}  // namespace kiln
