// One name per enumerator, in declaration order: how every kiln enum that users or files
// spell (precision modes and policies, cache outcomes, precision phases) gets its name and
// its parser, so that no state is compared as a string.
//
//   constexpr std::array<std::string_view, 3> kNames = {"hit", "miss", "off"};
//   name_of(kNames, CacheOutcome::miss)                          -> "miss"
//   parse_name<CacheOutcome>("mis", kNames, "cache outcome")     -> ConfigError
//     "[cache outcome] unknown value 'mis'; valid: hit, miss, off"
#pragma once
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/base/error.h"

namespace kiln {

template <class E, size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, E value) {
  KILN_CHECK(static_cast<size_t>(value) < N) << "enum value " << static_cast<int>(value) << " has no name";
  return names[static_cast<size_t>(value)];
}

// The enumerator named exactly `s`, or nullopt.
template <class E, size_t N>
std::optional<E> find_name(std::string_view s, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return E(i);
  return std::nullopt;
}

namespace detail {
// Lower-case, '-' -> '_', spaces dropped: how a near miss is recognised.
inline std::string normalise_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}
}  // namespace detail

// The enumerator named exactly `s`; anything else throws ConfigError
// "[<option>] unknown value '<s>'; valid: a, b, c", suggesting the right spelling when `s`
// differs from one only in case, '-' for '_', or spaces.
template <class E, size_t N>
E parse_name(std::string_view s, const std::array<std::string_view, N>& names, std::string_view option) {
  if (auto e = find_name<E>(s, names)) return *e;
  std::string valid;
  std::string_view suggestion;
  for (size_t i = 0; i < N; ++i) {
    valid += (i ? ", " : "") + std::string(names[i]);
    if (detail::normalise_name(s) == names[i]) suggestion = names[i];
  }
  const std::string hint = suggestion.empty() ? "" : " (did you mean '" + std::string(suggestion) + "'?)";
  KILN_THROW(ConfigError) << "[" << option << "] unknown value '" << s << "'; valid: " << valid << hint;
}

}  // namespace kiln
