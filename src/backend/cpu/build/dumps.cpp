#include "backend/cpu/build/dumps.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kiln/base/error.h"
#include "kiln/ir/text.h"

namespace kiln::cpu {
namespace {

namespace fs = std::filesystem;

// The name as a file-name part: anything but letters, digits, '-', '_' and '.' becomes '_'.
std::string file_part(const std::string& name) {
  std::string out = name.empty() ? "graph" : name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return out;
}

void write_file(const char* option, const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) KILN_THROW(ConfigError) << "[" << option << "] cannot create " << path.parent_path() << ": " << ec.message();
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    KILN_THROW(ConfigError) << "[" << option << "] cannot write " << path
                            << (errno ? std::string(": ") + std::strerror(errno) : std::string());
}

}  // namespace

CompileDumps::CompileDumps(const CompileOptions& options)
    : ir_dir_(options.dump_ir_dir), code_dir_(options.dump_code_dir), name_(file_part(options.name)) {}

std::function<void(int, const char*, const Graph&)> CompileDumps::pass_recorder() {
  if (ir_dir_.empty()) return {};
  return [this](int index, const char* pass, const Graph& g) {
    passes_.emplace_back(std::to_string(index) + "-" + pass + ".kir", print_graph(g));
  };
}

void CompileDumps::write(const std::string& key, const std::string& source) const {
  const std::string stem = name_ + "-" + key;
  for (const auto& [file, text] : passes_) write_file("KILN_DUMP_IR", fs::path(ir_dir_) / stem / file, text);
  if (!code_dir_.empty()) write_file("KILN_DUMP_CODE", fs::path(code_dir_) / (stem + ".cpp"), source);
}

}  // namespace kiln::cpu
