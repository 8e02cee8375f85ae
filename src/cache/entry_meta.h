// Reading an entry's meta.json: the one place its fields are taken apart. The file is
// data a person (or a fault) may have changed, so every field is checked for its type
// and range: a time out of the years 0..9999, a negative or fractional count, a string
// where a number belongs make the field unknown, never a crash or a wrapped number.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln::cache {

struct EntryMeta {
  nlohmann::json json;   // the parsed object; null when the text is not a JSON object
  std::string problem;   // why it cannot describe the entry of the key asked for; "" if it can
  std::optional<double> created, last_used;  // unix seconds
  int64_t hits = 0;      // 0 when missing or not a count
  double compile_seconds = 0;  // codegen + compile when stored
  std::string precision;
  int64_t graph_nodes = 0;
  int64_t object_bytes = -1;   // sizes.object; -1 when missing
  std::string checksum;        // of the object, hex
};

// Parses meta.json of the entry `key`; `path` names the file in `problem`.
EntryMeta parse_entry_meta(std::string_view text, const std::string& key, const std::string& path);
// The same for metadata parsed already.
EntryMeta entry_meta_of(nlohmann::json j, const std::string& key, const std::string& path);

// A count field (hits): an integer in 0..2^53, else nullopt.
std::optional<int64_t> meta_count(const nlohmann::json& j, const char* field);
// A time field (created, last_used): a finite number of unix seconds within the years
// 0..9999 (what a calendar can print), else nullopt.
std::optional<double> meta_time(const nlohmann::json& j, const char* field);

}  // namespace kiln::cache
