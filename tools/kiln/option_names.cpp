#include "option_names.h"

#include <map>

namespace kiln::cli {
namespace {

// Fields whose option is not the field's name with dashes.
const std::map<std::string, std::string>& renamed() {
  static const std::map<std::string, std::string> names = {{"max_steps", "--steps"},
                                                           {"random_seed", "--seed"},
                                                           {"num_threads", "--threads"},
                                                           {"cache_size_cap_bytes", "--cache-size-cap"},
                                                           {"cache_strict", "--cache-strict"},
                                                           {"all_reduce_bucket_bytes", "--all-reduce-bucket-size"}};
  return names;
}

}  // namespace

std::string with_option_names(const std::string& message, const CLI::App& cmd) {
  if (message.empty() || message[0] != '[') return message;
  const size_t close = message.find(']');
  if (close == std::string::npos) return message;
  const std::string field = message.substr(1, close - 1);
  std::string option;
  if (const auto it = renamed().find(field); it != renamed().end()) {
    option = it->second;
  } else {
    option = "--" + field;
    for (char& c : option)
      if (c == '_') c = '-';
  }
  if (!cmd.get_option_no_throw(option)) return message;
  return "[" + option + "]" + message.substr(close + 1);
}

}  // namespace kiln::cli
