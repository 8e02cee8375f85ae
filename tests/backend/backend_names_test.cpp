// The backends' one name table: names round-trip, anything else is refused listing them.
#include "kiln/backend/backend.h"

#include <gtest/gtest.h>

#include "kiln/base/error.h"

namespace kiln {
namespace {

TEST(BackendNames, RoundTripAndTheDefaultComesFirst) {
  EXPECT_EQ(backend_names(), (std::vector<std::string>{"cpu", "interp"}));
  for (const std::string& name : backend_names()) EXPECT_EQ(backend_name(parse_backend(name)), name);
  EXPECT_EQ(parse_backend("interp"), Backend::interp);
  EXPECT_EQ(backend_names().front(), backend_name(kDefaultBackend));
}

TEST(BackendNames, AnUnknownNameIsAConfigErrorListingTheValidOnes) {
  try {
    parse_backend("gpu");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[backend] unknown backend 'gpu'; valid: cpu, interp"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_backend("CPU"), ConfigError);  // names are exact
}

}  // namespace
}  // namespace kiln
