// A compiled object carries what it was built for (key, graph, arena, I/O signature), and a
// load refuses an object built for anything else: a cache entry whose step.so was swapped
// for another entry's, with its metadata fixed up to match, is a miss, never a run.
#include "backend/cpu/build/object_identity.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "backend/cpu/run/abi.h"
#include "backend/cpu/run/loader.h"
#include "backend/cpu/build/toolchain.h"
#include "cache/store.h"
#include "kiln/backend/compiler.h"
#include "kiln/base/error.h"
#include "kiln/ir/ops.h"
#include "support/cache_entries.h"
#include "support/small_graph.h"
#include "support/temp_files.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// small_graph() with another constant: the same inputs, outputs, shapes and arena, so
// only the identity's key and graph tell the two objects apart.
Graph scaled_graph(double factor) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3});
  const Tensor w = variable(g, "w", DType::f32, {3, 2}, Init::constant(0.5));
  g.add_output("y", relu(matmul(x, w) * factor).id());
  return g;
}

std::string read(const fs::path& p) { return ::testkit::read_file(p); }

// Puts `from`'s object into `to`'s entry and fixes `to`'s metadata (size and checksum) so
// that every check of the store passes: what a careless or hostile writer could do.
void swap_object(const fs::path& cache_dir, const std::string& from, const std::string& to) {
  ::testkit::replace_entry_object(cache_dir, to, read(cache::Store(cache_dir.string()).object_path(from)));
}

TEST(ObjectIdentity, ASwappedCacheEntryIsAMissNeverARun) {
  const fs::path dir = ::testkit::fresh_dir("identity-swap");
  const CompileOptions o{.cache = {.dir = dir.string()}};
  CompileReport two, three;
  compile_cpu(scaled_graph(2.0), o, &two);
  compile_cpu(scaled_graph(3.0), o, &three);
  ASSERT_EQ(two.cache, CacheOutcome::miss);
  ASSERT_NE(two.cache_key, three.cache_key);
  ASSERT_EQ(cache::Store(dir.string()).check(two.cache_key).state, cache::EntryCheck::State::ok);
  swap_object(dir, three.cache_key, two.cache_key);
  ASSERT_EQ(cache::Store(dir.string()).check(two.cache_key).state, cache::EntryCheck::State::ok)
      << "the store's own checks pass: only the object's identity can tell";

  CompileReport again;
  auto exe = compile_cpu(scaled_graph(2.0), o, &again);
  EXPECT_EQ(again.cache, CacheOutcome::miss);
  EXPECT_NE(again.cache_note.find("built for another graph"), std::string::npos) << again.cache_note;
  testkit::expect_small_graph_result(*exe);  // 2 * x w, not 3 * x w
  CompileReport repaired;
  compile_cpu(scaled_graph(2.0), o, &repaired);
  EXPECT_EQ(repaired.cache, CacheOutcome::hit) << "the bad entry was replaced";
  fs::remove_all(dir);
}

TEST(ObjectIdentity, EveryPartTellsGraphsApart) {
  cpu::ObjectIdentity a{"k", "g", 64, "s"};
  for (auto change : {+[](cpu::ObjectIdentity& i) { i.key += "x"; }, +[](cpu::ObjectIdentity& i) { i.graph += "x"; },
                      +[](cpu::ObjectIdentity& i) { i.arena_bytes += 64; },
                      +[](cpu::ObjectIdentity& i) { i.signature += "x"; }}) {
    cpu::ObjectIdentity b = a;
    change(b);
    EXPECT_NE(a.to_string(), b.to_string());
  }
  EXPECT_NE(cpu::identity_source(a).find("kiln_identity"), std::string::npos);
}

// An object that does not say what it was built for is not loaded where an identity is
// expected.
TEST(ObjectIdentity, AnObjectWithoutAnIdentityIsRefused) {
  const fs::path dir = ::testkit::fresh_dir("identity-none");
  fs::create_directories(dir);
  std::ofstream(dir / "step.cpp") << "extern \"C\" int kiln_abi_version() { return " << cpu::kAbiVersion << "; }\n"
                                     "extern \"C\" void kiln_step(const void*, void*, void**) {}\n";
  cpu::compile_shared_object(cpu::host_toolchain(), (dir / "step.cpp").string(), (dir / "step.so").string());
  EXPECT_NO_THROW(cpu::SharedObject((dir / "step.so").string()));
  try {
    cpu::SharedObject((dir / "step.so").string(), "key=abc graph=def arena=0 signature=0");
    ADD_FAILURE() << "loaded";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("(no kiln_identity)"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
