// Failpoints for crash-safety tests: the process dies by SIGKILL at a named point of a
// write, so a test can prove what a later run sees after a crash exactly there, instead
// of killing at a moment chosen by a timer.
//
// The environment variable holds `POINT` (every time the point is reached) or
// `POINT@N` (only when the write is for step N). Unset, a failpoint costs one read of the environment (kiln/base/settings.h).
#pragma once

#include <cstdint>

namespace kiln {

// Dies by SIGKILL if the variable `env` names `point` (and, when it says `@N`, step == N).
void failpoint(const char* env, const char* point, int64_t step = -1);

}  // namespace kiln
