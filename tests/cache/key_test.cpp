// The compile-cache key hashes named byte strings: their names, values and lengths.
#include "cache/key.h"

#include <gtest/gtest.h>

namespace kiln::cache {
namespace {

TEST(CacheKey, IsXxh3Of32HexDigitsAndEveryItemChangesIt) {
  KeyIngredients base;
  base.add("graph", hash_hex("graph text"));
  base.add("source", hash_hex("code"));
  const std::string key = base.key();
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(base.get("source"), hash_hex("code"));
  EXPECT_EQ(base.get("absent"), "");
  EXPECT_EQ(base.to_json()["graph"], hash_hex("graph text"));
  for (size_t i = 0; i < base.items.size(); ++i) {
    KeyIngredients changed = base;
    changed.items[i].second += "x";
    EXPECT_NE(key, changed.key()) << base.items[i].first;
    changed = base;
    changed.items[i].first += "x";
    EXPECT_NE(key, changed.key()) << base.items[i].first;
  }
}

TEST(CacheKey, LengthsAreHashed) {
  // Moving a character between adjacent ingredients changes the key.
  KeyIngredients a, b;
  a.add("p", "ab");
  a.add("q", "c");
  b.add("p", "a");
  b.add("q", "bc");
  EXPECT_NE(a.key(), b.key());
}

}  // namespace
}  // namespace kiln::cache
