// Writing a whole file so that readers see the old one or the new one, never part of
// either: the bytes go to ".tmp-<pid>-<name>" beside it, are fsynced, renamed over it, and
// the directory is fsynced. (A checkpoint directory's cleanup recognises those temporary
// names and removes only the ones whose process is gone.)
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

// Crash tests' failpoints (process/failpoint.h) at the stages of the write: "written",
// "fsynced", "renamed", "saved"; none when env is null.
struct WriteFailpoints {
  const char* env = nullptr;
  int64_t step = -1;
};

// SystemError "<tag> cannot write '<path>': <step>: <reason>" when any step fails; the temporary
// file is removed then.
void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& tag,
                           const WriteFailpoints& failpoints = {});

}  // namespace kiln
