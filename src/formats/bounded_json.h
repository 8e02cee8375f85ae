// Reading JSON that kiln did not necessarily write (summaries, metrics files, cache
// metadata, checkpoint manifests, lock files) with limits on its size and its nesting, so
// that a hostile or damaged file is a clean rejection, never a stack overflow in the code
// that walks the value (a record nested 100 000 levels deep) or an unbounded allocation.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln {

struct JsonLimits {
  size_t max_bytes = size_t{1} << 20;  // the text (a line of a JSON Lines file, or a whole file)
  int max_depth = 64;                  // nested arrays and objects; kiln's own records are 4 deep
};

// The value of `text`, or a discarded value (is_discarded()) with `why` saying what was
// wrong: "not JSON", "N bytes, more than the M a record may have", "nested more than 64
// levels deep". Never throws.
nlohmann::json parse_bounded_json(std::string_view text, const JsonLimits& limits, std::string* why = nullptr);

}  // namespace kiln
