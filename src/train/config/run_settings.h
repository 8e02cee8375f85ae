// The settings a resumed run should share with the run that wrote its checkpoint (seed,
// batch size, learning rate, data limit, ...): saved in the checkpoint's state under
// "run", compared on resume.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kiln {

// "" when every setting in `now` that the checkpoint's state also recorded is the same;
// else the changes, "name old -> new" joined by ", ". Settings recorded on one side only
// are not changes (a checkpoint of an older kiln records none).
std::string run_settings_changes(const nlohmann::json& saved_state, const nlohmann::json& now);

}  // namespace kiln
