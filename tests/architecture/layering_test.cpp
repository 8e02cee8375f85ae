// Dependencies point down the pipeline only. Each folder of the library is a layer; a file
// may include headers of its own folder and of lower layers, never of a higher layer or of
// another folder on the same level. A public header lives in include/kiln/<layer>/, the
// folder of the layer that implements it, and that folder is its layer. A new folder must
// be placed in the table below, and a header directly in include/kiln/ or in a folder that
// is no layer fails this test: where a thing lives is decided, not drifted into.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Lowest first. Folders on one level must not include each other.
const std::map<std::string, int> kLayerLevel = {
    {"base", -1},                    // what every layer uses: errors, the settings table, printable text
    {"ir", 0},     {"process", 0},  // the graph IR; the host process's tuning
    {"dist", 1},                     // the MPI world: rank, size, collectives
    {"autodiff", 1},                 // VJP rules, grad()
    {"formats", 1},                  // TensorFlow's file formats (TFRecord, checkpoint bundles, event protos); atomic file
                                     // writes; bounded JSON reading, for every reader of files kiln did not write
    {"passes", 2},                   // graph-to-graph passes and precision policies
    {"cache", 3},                    // the persistent compile cache (bytes and files)
    {"backend", 4},                  // interpreter, CPU compiler, oneDNN
    {"data", 5},                     // datasets and input pipelines
    {"train", 6},                    // configs, Estimator, hooks, checkpoints
    {"models", 7},                   // built-in model_fns
    {"report", 7},                   // summaries read back, the HTML/SVG report
    {"tools", 8},                    // the kiln command
    {"python", 8},                   // the Python package's bindings (python/src), a front end beside tools
};

struct Violation {
  std::string file, include, why;
};

// The layer of a public header, from its path below include/: kiln/<layer>/name.h. "" for a
// header directly in kiln/ or deeper down; the folder's name, perhaps no layer, otherwise.
std::string public_header_layer(const fs::path& inc) {
  std::vector<std::string> parts(inc.begin(), inc.end());
  return parts.size() == 3 && parts[0] == "kiln" ? parts[1] : "";
}

// Why a public header is in no layer, for the message.
std::string unplaced_header(const fs::path& inc) {
  const std::string layer = public_header_layer(inc);
  if (layer.empty())
    return "is not in a layer's folder: a public header lives in include/kiln/<layer>/, the folder of the layer that "
           "implements it";
  return "is in include/kiln/" + layer + "/, which is no layer: move it to the folder of the layer that implements "
         "it, or add '" + layer + "' to kLayerLevel";
}

// The layer of a file of the library, by where it lives.
std::string layer_of_file(const fs::path& rel) {
  const std::string top = rel.begin()->string();
  if (top == "src") return std::next(rel.begin())->string();
  if (top == "include") return public_header_layer(rel.lexically_relative("include"));
  return top;  // models, tools, python
}

// The layer of an #include "..." target, or "" if it names nothing in the library.
std::string layer_of_include(const fs::path& root, const std::string& inc, const fs::path& includer) {
  if (fs::exists(root / "include" / inc)) {
    const std::string layer = public_header_layer(inc);
    return kLayerLevel.count(layer) ? layer : "?public";
  }
  if (fs::exists(root / "src" / inc)) return fs::path(inc).begin()->string();
  // A header of the command (tools/kiln is on its include path) or beside the includer.
  if (fs::exists(root / "tools" / "kiln" / inc) || fs::exists(includer.parent_path() / inc))
    return layer_of_file(fs::relative(includer, root));
  return "";
}

std::vector<fs::path> library_files(const fs::path& root) {
  std::vector<fs::path> files;
  for (const char* dir : {"src", "include", "models", "tools", "python"})
    if (fs::exists(root / dir))
      for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && (e.path().extension() == ".h" || e.path().extension() == ".cpp")) files.push_back(e.path());
  return files;
}

std::vector<Violation> violations(const fs::path& root) {
  static const std::regex include_line(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<Violation> out;
  for (const fs::path& file : library_files(root)) {
    const fs::path rel = fs::relative(file, root);
    const std::string layer = layer_of_file(rel);
    if (!kLayerLevel.count(layer)) {
      out.push_back({rel.string(), "",
                     rel.begin()->string() == "include" ? unplaced_header(rel.lexically_relative("include"))
                                               : "is in no layer: add its folder to kLayerLevel in this test"});
      continue;
    }
    std::ifstream in(file);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string target = layer_of_include(root, m[1], file);
      if (target.empty() || target == layer) continue;
      if (!kLayerLevel.count(target)) {
        out.push_back({rel.string(), m[1], "includes a public header that " + unplaced_header(m[1].str())});
      } else if (kLayerLevel.at(target) >= kLayerLevel.at(layer)) {
        out.push_back({rel.string(), m[1], "layer '" + layer + "' includes layer '" + target + "', which is not below it"});
      }
    }
  }
  return out;
}

TEST(Layering, EveryIncludePointsDownThePipeline) {
  const fs::path root = KILN_SOURCE_DIR;
  for (const Violation& v : violations(root))
    ADD_FAILURE() << v.file << (v.include.empty() ? "" : ": #include \"" + v.include + "\"") << ": " << v.why;
  EXPECT_GT(library_files(root).size(), 100u) << "the scan found the sources";
}

// The check itself can fail: in a small tree of its own, a file of a lower layer that
// includes a higher one, a folder in no layer, a public header directly in include/kiln/
// and one in a folder that is no layer are found.
TEST(Layering, AnUpwardIncludeAndAnUnplacedFolderAreReported) {
  const fs::path root = fs::temp_directory_path() / ("kiln-layering-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* d : {"include/kiln/ir", "include/kiln/train", "include/kiln/elsewhere", "src/ir", "src/backend/cpu",
                        "src/train", "src/elsewhere"})
    fs::create_directories(root / d);
  auto write = [&](const char* path, const char* text) { std::ofstream(root / path) << text; };
  write("include/kiln/train/estimator.h", "#include \"kiln/ir/graph.h\"\n");
  write("include/kiln/ir/graph.h", "");
  write("include/kiln/loose.h", "");
  write("include/kiln/elsewhere/thing.h", "");
  write("src/backend/cpu/abi.h", "");
  write("src/train/ok.cpp", "#include \"kiln/ir/graph.h\"\n#include \"backend/cpu/abi.h\"\n");
  write("src/ir/bad.h", "#include \"kiln/train/estimator.h\"\n#include \"backend/cpu/abi.h\"\n#include <vector>\n");
  write("src/ir/unplaced.h", "#include \"kiln/loose.h\"\n#include \"kiln/elsewhere/thing.h\"\n");
  write("src/elsewhere/x.cpp", "");
  const std::vector<Violation> found = violations(root);
  fs::remove_all(root);
  std::map<std::string, int> by_file;
  std::string messages;
  for (const Violation& v : found) ++by_file[v.file], messages += v.file + ": " + v.why + "\n";
  EXPECT_EQ(by_file, (std::map<std::string, int>{{"include/kiln/elsewhere/thing.h", 1},
                                                 {"include/kiln/loose.h", 1},
                                                 {"src/elsewhere/x.cpp", 1},
                                                 {"src/ir/bad.h", 2},
                                                 {"src/ir/unplaced.h", 2}}))
      << messages;
  EXPECT_NE(messages.find("include/kiln/loose.h: is not in a layer's folder"), std::string::npos) << messages;
  EXPECT_NE(messages.find("include/kiln/elsewhere/, which is no layer"), std::string::npos) << messages;
}

}  // namespace
