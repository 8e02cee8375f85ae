// KILN_DUMP_IR / KILN_DUMP_CODE (CompileOptions::dump_ir_dir, dump_code_dir): each compiled
// graph's IR after every pass, in <dump_ir_dir>/<name>-<key>/<index>-<pass>.kir, and its
// generated source, in <dump_code_dir>/<name>-<key>.cpp. Written on a cache hit as on a
// miss; <key> (the cache key) tells graphs apart, so no dump overwrites another graph's.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/backend/compiler.h"
#include "kiln/ir/graph.h"

namespace kiln::cpu {

class CompileDumps {
 public:
  explicit CompileDumps(const CompileOptions& options);

  // For LowerOptions::after_pass: keeps each pass's IR until write(). Empty (no recording)
  // when the IR is not dumped.
  std::function<void(int, const char*, const Graph&)> pass_recorder();
  // Writes what was asked for. ConfigError naming the option and the path if it cannot.
  void write(const std::string& key, const std::string& source) const;

 private:
  std::string ir_dir_, code_dir_, name_;
  std::vector<std::pair<std::string, std::string>> passes_;  // file name, IR text
};

}  // namespace kiln::cpu
