// Why a cache path may be trusted: entries are shared objects that kiln loads and runs,
// so anything another user could have written is code injection. A path is safe when it
// is not a symlink, is owned by this process's effective user, and is not writable by
// group or others.
#pragma once
#include <string>

namespace kiln::cache {

enum class PathKind { directory, file };

// "" if `path` is safe and of `kind`; otherwise the reason, e.g.
// "/c/ab is writable by group or others (mode 0775)".
std::string unsafe_reason(const std::string& path, PathKind kind);

// Creates `dir` (and missing parents) with mode 0700 if missing, then checks it is a safe
// directory this process can write, and makes it kiln's (claim_cache_root in layout.h: a
// marker, written only in an empty directory or an older kiln's cache). "" on success,
// else the reason the cache cannot work.
std::string prepare_cache_root(const std::string& dir);

// Creates `dir` with mode 0700 if missing; "" or the reason it failed or is unsafe.
std::string ensure_private_dir(const std::string& dir);

// fsync()s a file or directory; false on failure.
bool sync_path(const std::string& path);

}  // namespace kiln::cache
