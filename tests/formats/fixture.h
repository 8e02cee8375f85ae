// The fixtures real TensorFlow wrote (tests/formats/fixtures/make_fixtures.py) and the
// values it wrote into them (expected.json).
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace testkit {

inline std::filesystem::path tf_fixture(const std::string& name) {
  return std::filesystem::path(KILN_SOURCE_DIR) / "tests/formats/fixtures" / name;
}

inline std::string slurp_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const nlohmann::json& tf_expected() {
  static const nlohmann::json j = nlohmann::json::parse(slurp_file(tf_fixture("expected.json")));
  return j;
}

// expected.json's list `key` of hex strings, as bytes each.
inline std::vector<std::string> tf_expected_bytes(const std::string& key) {
  std::vector<std::string> out;
  for (const auto& hex : tf_expected()[key]) {
    const std::string h = hex.get<std::string>();
    std::string r;
    for (size_t i = 0; i < h.size(); i += 2) r.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    out.push_back(r);
  }
  return out;
}

}  // namespace testkit
