// Checks `kiln train` makes before anything is built or written: the paths it will use
// (also under --dry-run) and the data's shape against the model.
#pragma once
#include <string>

#include "kiln/data.h"

namespace kiln::cli {

// DataError when data_dir is missing, not a directory or cannot be searched; ConfigError
// when model_dir (if given) is, or lies under, something that is not a directory.
void check_train_paths(const std::string& data_dir, const std::string& model_dir);
// The model_dir part of check_train_paths (gpt's data is a file or a folder of text).
void check_model_dir_path(const std::string& model_dir);

// DataError when the training or test examples do not have the features `model` takes.
void check_image_size(const std::string& model, const std::string& data_dir, const data::Dataset& train,
                      const data::Dataset& test);

}  // namespace kiln::cli
