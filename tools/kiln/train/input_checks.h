// A check `kiln train` makes before anything is built or written (also under --dry-run):
// the model directory's path. The data's checks are the model family's (kiln/models/recipe.h).
#pragma once
#include <string>

namespace kiln::cli {

// ConfigError when model_dir (if given) is, or lies under, something that is not a directory.
void check_model_dir_path(const std::string& model_dir);

}  // namespace kiln::cli
