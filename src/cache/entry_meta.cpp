#include "formats/bounded_json.h"
#include "cache/entry_meta.h"

#include <cmath>

namespace kiln::cache {
namespace {

constexpr double kMaxCount = 9007199254740992.0;  // 2^53: every count below it is exact in JSON
constexpr double kMinTime = -62167219200.0;       // 0000-01-01T00:00:00Z
constexpr double kMaxTime = 253402300799.0;       // 9999-12-31T23:59:59Z

std::optional<double> number(const nlohmann::json& j, const char* field) {
  if (!j.is_object() || !j.contains(field) || !j[field].is_number()) return std::nullopt;
  const double v = j[field].get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> meta_count(const nlohmann::json& j, const char* field) {
  if (!j.is_object() || !j.contains(field) || !j[field].is_number_integer()) return std::nullopt;
  const nlohmann::json& v = j[field];
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(kMaxCount)) return std::nullopt;
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  const int64_t n = v.get<int64_t>();
  if (n < 0 || static_cast<double>(n) > kMaxCount) return std::nullopt;
  return n;
}

std::optional<double> meta_time(const nlohmann::json& j, const char* field) {
  const auto t = number(j, field);
  if (!t || *t < kMinTime || *t > kMaxTime) return std::nullopt;
  return t;
}

EntryMeta parse_entry_meta(std::string_view text, const std::string& key, const std::string& path) {
  std::string why;
  nlohmann::json j = parse_bounded_json(text, JsonLimits{}, &why);
  if (j.is_discarded() || !j.is_object()) {
    EntryMeta m;
    m.problem = path + (j.is_discarded() ? " is not valid JSON (" + why + ")" : " is not a JSON object");
    return m;
  }
  return entry_meta_of(std::move(j), key, path);
}

EntryMeta entry_meta_of(nlohmann::json j, const std::string& key, const std::string& path) {
  EntryMeta m;
  if (!j.is_object()) {
    m.problem = path + " is not a JSON object";
    return m;
  }
  m.json = std::move(j);
  const nlohmann::json& o = m.json;
  m.created = meta_time(o, "created");
  m.last_used = meta_time(o, "last_used");
  m.hits = meta_count(o, "hits").value_or(0);
  if (o.contains("seconds") && o["seconds"].is_object()) {
    const double s = number(o["seconds"], "codegen").value_or(0) + number(o["seconds"], "compile").value_or(0);
    if (s >= 0 && s < 1e9) m.compile_seconds = s;
  }
  if (o.contains("precision_policy") && o["precision_policy"].is_string()) m.precision = o["precision_policy"];
  if (o.contains("graph") && o["graph"].is_object()) m.graph_nodes = meta_count(o["graph"], "nodes").value_or(0);
  if (o.contains("sizes") && o["sizes"].is_object()) m.object_bytes = meta_count(o["sizes"], "object").value_or(-1);
  if (o.contains("checksum") && o["checksum"].is_string()) m.checksum = o["checksum"];
  if (!o.contains("key") || o["key"] != key)
    m.problem = path + " belongs to another key";
  else if (m.checksum.empty() || m.object_bytes < 0)
    m.problem = path + " lacks the checksum or the object size";
  return m;
}

}  // namespace kiln::cache
