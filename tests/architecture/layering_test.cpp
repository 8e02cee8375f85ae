// Dependencies point down the pipeline only. Each folder of the library is a layer; a file
// may include headers of its own folder and of lower layers, never of a higher layer or of
// another folder on the same level. Public headers (include/kiln/) belong to the layer
// that implements them. A new folder or public header must be placed in the tables below,
// or this test fails: where a thing lives is decided, not drifted into.
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

// The layer of each public header: the folder whose code implements it.
const std::map<std::string, std::string> kPublicHeaderLayer = {
    {"array.h", "ir"},          {"dtype.h", "ir"},         {"float_math.h", "ir"},         {"error.h", "base"},
    {"graph.h", "ir"},          {"op.h", "ir"},            {"op_list.h", "ir"},
    {"ops.h", "ir"},            {"shape.h", "ir"},         {"text.h", "ir"},
    {"transformer.h", "ir"},
    {"process.h", "process"},   {"interrupts.h", "process"},   {"autodiff.h", "autodiff"}, {"precision_policy.h", "passes"},
    {"cache_settings.h", "cache"}, {"compile_cache.h", "cache"},
    {"runtime.h", "backend"},   {"backend.h", "backend"},  {"compiler.h", "backend"},
    {"cpu_features.h", "backend"}, {"world.h", "dist"},
    {"data.h", "data"},         {"text_data.h", "data"},
    {"checkpoint.h", "train"},  {"config.h", "train"},     {"estimator.h", "train"},
    {"hooks.h", "train"},       {"optimizer.h", "train"},  {"precision.h", "train"},
    {"learning_rate.h", "train"}, {"optimizer_params.h", "train"}, {"training_range.h", "train"},
    {"model_dir_lock.h", "train"},  {"summary.h", "train"},
    {"printable.h", "base"},    {"settings.h", "base"},
    {"report.h", "report"},
    {"models.h", "models"},     {"recipe.h", "models"},
};

struct Violation {
  std::string file, include, why;
};

// The layer of a file of the library, by where it lives.
std::string layer_of_file(const fs::path& rel) {
  const std::string top = rel.begin()->string();
  if (top == "src") return std::next(rel.begin())->string();
  if (top == "include") {
    auto it = kPublicHeaderLayer.find(rel.filename().string());
    return it == kPublicHeaderLayer.end() ? "" : it->second;
  }
  return top;  // models, tools, python
}

// The layer of an #include "..." target, or "" if it names nothing in the library.
std::string layer_of_include(const fs::path& root, const std::string& inc, const fs::path& includer) {
  if (fs::exists(root / "include" / inc)) {
    auto it = kPublicHeaderLayer.find(fs::path(inc).filename().string());
    return it == kPublicHeaderLayer.end() ? "?public" : it->second;
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
      out.push_back({rel.string(), "", "is in no layer: add its folder or header to the tables in this test"});
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
        out.push_back({rel.string(), m[1], "includes a public header that is in no layer"});
      } else if (kLayerLevel.at(target) >= kLayerLevel.at(layer)) {
        out.push_back({rel.string(), m[1], "layer '" + layer + "' includes layer '" + target + "', which is not below it"});
      }
    }
  }
  return out;
}

TEST(Layering, EveryIncludePointsDownThePipeline) {
  const fs::path root = KILN_SOURCE_DIR;
  for (const Violation& v : violations(root)) ADD_FAILURE() << v.file << ": #include \"" << v.include << "\": " << v.why;
  EXPECT_GT(library_files(root).size(), 100u) << "the scan found the sources";
}

// The check itself can fail: in a small tree of its own, a file of a lower layer that
// includes a higher one, and a folder in no layer, are found.
TEST(Layering, AnUpwardIncludeAndAnUnplacedFolderAreReported) {
  const fs::path root = fs::temp_directory_path() / ("kiln-layering-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* d : {"include/kiln", "src/ir", "src/backend/cpu", "src/train", "src/elsewhere"}) fs::create_directories(root / d);
  auto write = [&](const char* path, const char* text) { std::ofstream(root / path) << text; };
  write("include/kiln/estimator.h", "");
  write("include/kiln/graph.h", "");
  write("src/backend/cpu/abi.h", "");
  write("src/train/ok.cpp", "#include \"kiln/graph.h\"\n#include \"backend/cpu/abi.h\"\n");
  write("src/ir/bad.h", "#include \"kiln/estimator.h\"\n#include \"backend/cpu/abi.h\"\n#include <vector>\n");
  write("src/elsewhere/x.cpp", "");
  const std::vector<Violation> found = violations(root);
  fs::remove_all(root);
  std::map<std::string, int> by_file;
  for (const Violation& v : found) ++by_file[v.file];
  EXPECT_EQ(by_file, (std::map<std::string, int>{{"src/elsewhere/x.cpp", 1}, {"src/ir/bad.h", 2}}));
}

}  // namespace
