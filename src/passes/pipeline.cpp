#include <filesystem>
#include <fstream>

#include "kiln/base/error.h"
#include "kiln/ir/text.h"
#include "passes/passes.h"

namespace kiln::passes {
namespace {

void dump(const std::string& dir, int index, const char* name, const Graph& g) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = dir + "/" + std::to_string(index) + "-" + name + ".kir";
  std::ofstream out(path);
  out << print_graph(g);
  out.close();  // the write is only done (or lost) here
  if (!out) KILN_THROW(SystemError) << "[KILN_DUMP_IR] cannot write '" << path << "'";
}

}  // namespace

Graph lower(const Graph& input, const LowerOptions& options) {
  verify(input);
  Graph g = input;
  int index = 0;
  auto record = [&](const char* name) {
    dump(options.dump_dir, index, name, g);
    if (options.after_pass) options.after_pass(index, name, g);
    ++index;
  };
  record("input");
  auto step = [&](const char* name, auto&& pass) {
    g = pass(g);
#ifndef NDEBUG
    verify(g);
#endif
    record(name);
  };
  step("precision", [&](const Graph& x) { return apply_precision(x, options.policy); });
  step("simplify", simplify);
  step("cse", cse);
  step("transposes", sink_transposes);
  step("epilogues", [&](const Graph& x) { return fuse_epilogues(x, options.float16_in_float32); });
  // Always a stage (unchanged when not asked for): dumps number alike on every machine.
  step("float16_in_float32", [&](const Graph& x) { return options.float16_in_float32 ? hold_float16_in_float32(x) : x; });
  step("relu_masks", fuse_relu_masks);
  step("dce", dce);
  step("all_reduce_buckets", [&](const Graph& x) { return bucket_all_reduces(x, options.all_reduce_bucket_bytes); });
  step("all_reduce_readers", defer_all_reduce_readers);
  return g;
}

}  // namespace kiln::passes
