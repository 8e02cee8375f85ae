// The settings table: docs/settings.md is generated from it, nothing reads the environment
// but it, every variable kiln names is in it, and its readers parse exactly.
#include "kiln/base/settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "kiln/base/error.h"
#include "kiln/cache/cache_settings.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> sources(const std::vector<std::string>& dirs, const std::set<std::string>& extensions) {
  std::vector<fs::path> out;
  for (const std::string& d : dirs)
    for (const auto& e : fs::recursive_directory_iterator(fs::path(KILN_SOURCE_DIR) / d))
      if (e.is_regular_file() && extensions.count(e.path().extension().string())) out.push_back(e.path());
  return out;
}

TEST(Settings, TheDocsPageIsTheTable) {
  const fs::path page = fs::path(KILN_SOURCE_DIR) / "docs" / "settings.md";
  EXPECT_EQ(read_file(page), settings_markdown())
      << "docs/settings.md differs from the table: ./build/kiln settings --markdown > docs/settings.md";
}

TEST(Settings, NothingElseReadsTheEnvironment) {
  const std::regex cpp_read(R"(\b(std::)?(secure_)?getenv\s*\()");
  for (const fs::path& f : sources({"src", "tools", "python/src", "models", "include"}, {".cpp", ".h"})) {
    if (f.filename() == "settings.cpp" && f.parent_path().filename() == "base") continue;
    std::ifstream in(f);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string code = line.substr(0, line.find("//"));
      EXPECT_FALSE(std::regex_search(code, cpp_read)) << f << ":" << n << ": reads the environment: use kiln/base/settings.h";
    }
  }
  // Python: only kiln/__init__.py, which must choose OpenMP's wait policy before kiln._core
  // (and with it libgomp) loads, and so before the table can be reached.
  const std::regex py_read(R"(\bos\.(environ|getenv)\b|\b_os\.environ\b)");
  for (const fs::path& f : sources({"python/kiln"}, {".py"})) {
    if (f.filename() == "__init__.py" && f.parent_path().filename() == "kiln") continue;
    std::ifstream in(f);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      EXPECT_FALSE(std::regex_search(line.substr(0, line.find('#')), py_read))
          << f << ":" << n << ": reads the environment: use kiln._core.setting_value";
  }
}

TEST(Settings, EveryVariableKilnNamesIsInTheTable) {
  std::set<std::string> named;
  const std::regex quoted(R"re(["'](KILN_[A-Z0-9_]*[A-Z0-9]|OMP_[A-Z_]+|GOMP_[A-Z_]+|OMPI_[A-Z_]+|TMPDIR)["'])re");
  for (const fs::path& f : sources({"src", "tools", "python/src", "python/kiln", "models"}, {".cpp", ".h", ".py"})) {
    const std::string text = read_file(f);
    for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it) named.insert((*it)[1]);
  }
  EXPECT_GT(named.size(), 10u) << "the scan found the reads";
  for (const std::string& name : named) {
    bool found = false;
    for (const Setting& s : settings_table()) found = found || name == s.name;
    EXPECT_TRUE(found) << name << " is named in the sources but is not in the settings table";
  }
}

TEST(Settings, EachNameOnceWithEveryColumnFilled) {
  std::set<std::string> seen;
  for (const Setting& s : settings_table()) {
    EXPECT_TRUE(seen.insert(s.name).second) << s.name << " twice";
    EXPECT_TRUE(*s.valid && *s.fallback && *s.doc && *s.layer) << s.name;
  }
  EXPECT_THROW(setting("KILN_NO_SUCH_SETTING"), InternalError);
  EXPECT_THROW(setting_value("KILN_NO_SUCH_SETTING"), InternalError);
}

TEST(Settings, IntegersAreExactAndErrorsNameTheSetting) {
  ::setenv("KILN_MAX_STEPS", "9223372036854775807", 1);
  EXPECT_EQ(setting_integer("KILN_MAX_STEPS", 1, INT64_MAX), INT64_MAX) << "never through a double";
  ::setenv("KILN_MAX_STEPS", "9007199254740993", 1);
  EXPECT_EQ(setting_integer("KILN_MAX_STEPS", 1, INT64_MAX), int64_t{9007199254740993});
  for (const char* bad : {"0", "12x", "1e3", "9223372036854775808", " 5", "-"}) {
    ::setenv("KILN_MAX_STEPS", bad, 1);
    try {
      setting_integer("KILN_MAX_STEPS", 1, INT64_MAX);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("[KILN_MAX_STEPS] '") + bad + "' is not valid", 0), 0u)
          << e.what();
    }
  }
  ::setenv("KILN_MAX_STEPS", "", 1);
  EXPECT_EQ(setting_integer("KILN_MAX_STEPS", 1, 10), std::nullopt);
  ::unsetenv("KILN_MAX_STEPS");
  EXPECT_EQ(setting_integer("KILN_MAX_STEPS", 1, 10), std::nullopt);
  ::setenv("KILN_CXX_TIMEOUT", "inf", 1);
  EXPECT_THROW(setting_positive_number("KILN_CXX_TIMEOUT"), ConfigError);
  ::setenv("KILN_CXX_TIMEOUT", "2.5", 1);
  EXPECT_EQ(setting_positive_number("KILN_CXX_TIMEOUT"), 2.5);
  ::unsetenv("KILN_CXX_TIMEOUT");
}

// flag > config > environment > default, coded once: a given value wins, the environment
// fills only what is not given, and the cache's settings follow the same rule.
TEST(Settings, AGivenValueWinsOverTheEnvironment) {
  ::setenv("KILN_CACHE_DIR", "/env/cache", 1);
  EXPECT_EQ(setting_or("KILN_CACHE_DIR", "/given"), "/given");
  EXPECT_EQ(setting_or("KILN_CACHE_DIR", ""), "/env/cache");
  CacheSettings given;
  given.remote_url = "redis://given:1";
  const CacheSettings c = cache_with_environment_defaults(given);
  EXPECT_EQ(c.dir, "/env/cache");
  EXPECT_EQ(c.remote_url, "redis://given:1");
  ::unsetenv("KILN_CACHE_DIR");
  EXPECT_EQ(setting_or("KILN_CACHE_DIR", ""), "");
  EXPECT_THROW(setting_or("KILN_NO_SUCH_SETTING", "x"), InternalError) << "every read names a row of the table";
}

}  // namespace
}  // namespace kiln
