#include "formats/bounded_json.h"

namespace kiln {
namespace {

// The deepest nesting of arrays and objects in `text`, counted outside strings; stops
// counting past `limit`. Linear, and needs no stack of its own.
int nesting_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

nlohmann::json parse_bounded_json(std::string_view text, const JsonLimits& limits, std::string* why) {
  auto reject = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return nlohmann::json(nlohmann::json::value_t::discarded);
  };
  if (text.size() > limits.max_bytes)
    return reject(std::to_string(text.size()) + " bytes, more than the " + std::to_string(limits.max_bytes) +
                  " one may have");
  if (nesting_depth(text, limits.max_depth) > limits.max_depth)
    return reject("nested more than " + std::to_string(limits.max_depth) + " levels deep");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return reject("not JSON");
  return j;
}

}  // namespace kiln
