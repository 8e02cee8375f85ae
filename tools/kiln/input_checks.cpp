#include "input_checks.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "kiln/error.h"
#include "kiln/models.h"

namespace kiln::cli {
namespace fs = std::filesystem;

void check_train_paths(const std::string& data_dir, const std::string& model_dir) {
  std::error_code ec;
  const fs::file_status data = fs::status(data_dir, ec);
  if (!fs::exists(data))
    KILN_THROW(DataError) << "[data] Fashion-MNIST directory '" << data_dir << "' does not exist"
                          << (ec && ec != std::errc::no_such_file_or_directory ? " or cannot be examined (" + ec.message() + ")" : "")
                          << " (install the 'dataset-fashion-mnist' package with scripts/install-deps)";
  if (!fs::is_directory(data)) KILN_THROW(DataError) << "[data] '" << data_dir << "' is not a directory";
  if (::access(data_dir.c_str(), R_OK | X_OK) != 0) {
    const int err = errno;
    KILN_THROW(DataError) << "[data] directory '" << data_dir << "' cannot be read: " << std::strerror(err);
  }
  check_model_dir_path(model_dir);
}

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

void check_image_size(const std::string& model, const std::string& data_dir, const data::Dataset& train,
                      const data::Dataset& test) {
  const int64_t want = model_input_size(model);
  const auto side = static_cast<int64_t>(std::lround(std::sqrt(static_cast<double>(want))));
  for (const auto& [which, ds] : {std::pair{"training", &train}, std::pair{"test", &test}}) {
    if (ds->feature_dim() == want) continue;
    KILN_THROW(DataError) << "[data] the " << which << " images in '" << data_dir << "' have " << ds->feature_dim()
                          << " pixels each, but model " << model << " takes " << side << "x" << side << " = " << want
                          << " (Fashion-MNIST's size); nothing was trained";
  }
}

}  // namespace kiln::cli
