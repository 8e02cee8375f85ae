// The names kiln creates in a cache root, and the marker that makes a directory kiln's.
// kiln deletes only names listed here, only under a root that carries the marker:
//   <root>/.kiln-cache                      the marker (JSON: format, version, created)
//   <root>/<k0k1>/                          prefix directories (two hex digits of the key)
//   <root>/<k0k1>/<key>/                    an entry: step.so, meta.json (and .meta.XXXXXX
//                                           while a hit is being recorded)
//   <root>/<k0k1>/<key>.lock                the per-key lock file (never deleted: lock.h)
//   <root>/tmp/kiln-<pid>-<key>.XXXXXX      staging directories of stores and removals
//   <root>/tmp/<key>.XXXXXX                 the same, as kiln named them before the marker
// A cache made before the marker existed is adopted by the first compile that uses it
// (claim_cache_root), provided everything in it has one of these names.
#pragma once
#include <string>
#include <sys/types.h>

namespace kiln::cache {

inline constexpr const char* kMarkerFile = ".kiln-cache";
inline constexpr const char* kStagingDir = "tmp";
inline constexpr const char* kMarkerFormat = "kiln-compile-cache";

bool is_prefix_name(const std::string& name);  // two lowercase hex digits
bool is_key_name(const std::string& name);     // 32 lowercase hex digits
// `<key>.lock` for a key under `prefix`.
bool is_lock_name(const std::string& prefix, const std::string& name);
// A key directory under `prefix`.
bool is_entry_name(const std::string& prefix, const std::string& name);
// step.so, meta.json, .meta.XXXXXX: the files of an entry (and of a staging directory).
bool is_entry_file_name(const std::string& name);
// The marker or a temporary file of a marker being written.
bool is_marker_name(const std::string& name);

// A staging directory name (either form). pid: the process that made it, 0 for the old
// form (which does not say).
bool parse_staging_name(const std::string& name, pid_t& pid);
// The mkdtemp template for a staging directory of this process (without the directory).
std::string staging_template(const std::string& key);

// "" if `root` carries a valid marker: a regular file (not a link), owned by this user,
// not writable by group or others, saying it is a kiln compile cache; else why not.
std::string marker_problem(const std::string& root);

// Makes `root` (a safe directory: prepare_cache_root) kiln's cache: accepts a valid marker,
// or writes one in a directory that is empty or holds only names kiln creates (a cache of
// an older kiln). A directory with anything else in it is refused: kiln deletes inside
// its cache, so it never takes over a directory holding other files. "" or why not.
std::string claim_cache_root(const std::string& root);

}  // namespace kiln::cache
