#include "train/config/run_settings.h"

namespace kiln {

std::string run_settings_changes(const nlohmann::json& saved_state, const nlohmann::json& now) {
  if (!saved_state.is_object() || !saved_state.contains("run") || !saved_state["run"].is_object() || !now.is_object())
    return {};
  const nlohmann::json& saved = saved_state["run"];
  std::string out;
  for (const auto& [name, value] : now.items()) {
    if (!saved.contains(name) || saved[name] == value) continue;
    out += (out.empty() ? "" : ", ") + name + " " + saved[name].dump() + " -> " + value.dump();
  }
  return out;
}

}  // namespace kiln
