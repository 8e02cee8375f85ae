#include "input_checks.h"

#include <filesystem>

#include "kiln/base/error.h"

namespace kiln::cli {
namespace fs = std::filesystem;

void check_model_dir_path(const std::string& model_dir) {
  std::error_code ec;
  if (model_dir.empty()) return;
  // The directory, or the nearest part of its path that exists, must be a directory.
  for (fs::path p = fs::path(model_dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    const fs::file_status st = fs::status(p, ec);
    if (fs::exists(st)) {
      if (fs::is_directory(st)) return;
      if (p == fs::path(model_dir).lexically_normal())
        KILN_THROW(ConfigError) << "[model_dir] '" << model_dir << "' is a file, not a directory";
      KILN_THROW(ConfigError) << "[model_dir] '" << model_dir << "' cannot be created: '" << p.string()
                              << "' is a file, not a directory";
    }
    if (p == p.parent_path()) return;
  }
}

}  // namespace kiln::cli
