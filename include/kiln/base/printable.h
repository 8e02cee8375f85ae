// Text from outside kiln (a Redis key, a cache entry's or a file's name, a record's
// feature name) made safe to print on a terminal or in a log line: control bytes, DEL,
// backslashes and bytes that are not valid UTF-8 become \xHH escapes, so whoever wrote the
// text cannot move the cursor, recolour the screen, or forge a line of kiln's output
// ("...  good\n"). Printable ASCII and valid UTF-8 (other than C1 controls) are kept.
#pragma once
#include <string>
#include <string_view>

namespace kiln {

std::string printable(std::string_view text);

}  // namespace kiln
