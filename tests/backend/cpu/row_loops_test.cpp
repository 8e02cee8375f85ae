// Elementwise steps that read other elements than their own (broadcasts, transposes,
// slices, pads, head splits and merges) run as rows of the last axis with the index
// arithmetic written per row (codegen.cpp, ExprEmitter::coordinate). Every form of
// coordinate the row loop rewrites must read exactly what the interpreter reads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "backend/cpu/codegen/codegen.h"
#include "kiln/ir/ops.h"
#include "passes/passes.h"
#include "support/backend_compare.h"
#include "support/generated_code.h"
#include "support/test_arrays.h"
#include "support/vectorization.h"

namespace kiln {
namespace {

using testkit::source_of;
using testkit::occurrences;

Array counting(Shape shape, float scale) {
  Array a(DType::f32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = scale * static_cast<float>(i % 997) - 3.0f;
  return a;
}

// One output per form; each is its own step (outputs are not fused into each other).
Graph row_loop_graph(Feeds& feeds) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {64, 24});
  const Tensor b = placeholder(g, "b", DType::f32, {24});
  const Tensor c = placeholder(g, "c", DType::f32, {64, 1});
  const Tensor wide = placeholder(g, "wide", DType::f32, {64, 48});
  const Tensor heads = placeholder(g, "heads", DType::f32, {8, 16, 4, 8});
  const Tensor qkv = placeholder(g, "qkv", DType::f32, {128, 96});
  const Tensor dq = placeholder(g, "dq", DType::f32, {64, 8});
  const Tensor dk = placeholder(g, "dk", DType::f32, {64, 8});
  const Tensor dv = placeholder(g, "dv", DType::f32, {64, 8});
  feeds = {{"x", counting({64, 24}, 0.5f)},      {"b", counting({24}, 0.25f)},
           {"c", counting({64, 1}, 0.125f)},     {"wide", counting({64, 48}, 0.75f)},
           {"heads", counting({8, 16, 4, 8}, 1.5f)}, {"qkv", counting({128, 96}, 0.375f)},
           {"dq", counting({64, 8}, 0.5f)},      {"dk", counting({64, 8}, -0.25f)},
           {"dv", counting({64, 8}, 2.0f)}};
  g.add_output("bias", (x + b).id());                                      // j
  g.add_output("column", (x * c).id());                                    // r
  g.add_output("transposed", (transpose(x, {1, 0}) + 1.0).id());           // j * 24 + r
  g.add_output("sliced", (slice(wide, {2, 8}, {62, 32}) * 2.0).id());      // r + 2, j + 8
  g.add_output("padded", (pad(x, {1, 3}, {2, 5}) + 0.5).id());             // clamped, masked
  // Merge heads: [8,16,4,8] -> [8,4,16,8]... -> rows of 32 = 4 heads x 8.
  g.add_output("merged", (reshape(transpose(heads, {0, 2, 1, 3}), {8, 4, 128}) - 1.0).id());
  // (The heads read as [8,4,16,8] and merged: two transposes in a row would cancel.)
  g.add_output("merged_wide", (reshape(heads, {8, 16, 32}) + reshape(transpose(reshape(heads, {8, 4, 16, 8}), {0, 2, 1, 3}), {8, 16, 32})).id());
  // Split heads out of a fused projection: [128,96] -> k = columns 32..63 -> [8,16,4,8] -> [8,4,16,8].
  g.add_output("split", (transpose(reshape(slice(qkv, {0, 32}, {128, 64}), {8, 16, 4, 8}), {0, 2, 1, 3}) * 3.0).id());
  // The gradient of three slices of one projection: pads summed, cut into pieces at the
  // pads' edges (8, 16) so that each piece copies one input.
  g.add_output("pads_sum", (pad(dq, {0, 0}, {0, 16}) + pad(dk, {0, 8}, {0, 8}) + pad(dv, {0, 16}, {0, 0})).id());
  return g;
}

TEST(RowLoops, EveryRewrittenCoordinateReadsWhatTheInterpreterReads) {
  Feeds feeds;
  const Graph g = row_loop_graph(feeds);
  const auto r = testkit::run_both(g, feeds, {}, PrecisionPolicy::original, 2);
  testkit::expect_same(r, [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

TEST(RowLoops, StepsThatGatherRunAsRowsAndPlainOnesAsOneLoop) {
  Feeds feeds;
  const std::string src = source_of(row_loop_graph(feeds));
  EXPECT_GE(occurrences(src, "for (int64_t r = 0;"), 7) << src;
  // A bias add reads its bias contiguously (at j), not by a computed gather.
  EXPECT_NE(src.find(" = j * 1;"), std::string::npos) << src;
  Graph plain;
  const Tensor a = placeholder(plain, "a", DType::f32, {64, 24});
  plain.add_output("y", (exp(a) * a).id());
  // Rows cut where a pad starts or ends, and where a head of 8 columns starts (merged_wide).
  EXPECT_NE(src.find("for (int64_t j = 8; j < 16; ++j)"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int64_t j = 24; j < 32; ++j)"), std::string::npos) << src;
  const std::string flat = source_of(plain);
  EXPECT_EQ(occurrences(flat, "for (int64_t r = 0;"), 0) << flat;
  EXPECT_EQ(occurrences(flat, "for (int64_t i = 0;"), 1) << flat;
}

// A gather of a gather (the head split: a slice, then a transpose) writes the second
// index from the first one's row part (R + j), so no element divides its index.
TEST(RowLoops, AChainedGatherReadsThroughTheFirstIndexsRowPart) {
  Graph g;
  const Tensor qkv = placeholder(g, "qkv", DType::f32, {128, 96});
  g.add_output("split", (transpose(reshape(slice(qkv, {0, 32}, {128, 64}), {8, 16, 4, 8}), {0, 2, 1, 3}) * 3.0).id());
  const std::string src = source_of(g);
  EXPECT_EQ(occurrences(src, "static_cast<uint32_t>(i"), 0) << src;
  EXPECT_EQ(occurrences(src, "for (int64_t r = 0;"), 1) << src;
}

// In one flat loop (rows of 7 are too narrow for row loops), a chain of pads, slices and
// transposes (a depthwise convolution's gradient: nine pads of one slice) divides the
// loop's index i once per axis and never an index computed from it: each link reads the
// coordinates the previous one computed (ExprEmitter::note_coordinates).
TEST(RowLoops, AChainOfGathersInAFlatLoopDividesOnlyTheLoopsIndex) {
  Graph g;
  const Tensor x = placeholder(g, "x", DType::f32, {2, 3, 9, 9});
  const Tensor dy = placeholder(g, "dy", DType::f32, {2, 3, 7, 7});
  Tensor sum = pad(dy, {0, 0, 0, 0}, {0, 0, 2, 2});
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 1; b < 3; ++b) sum = sum + pad(dy, {0, 0, a, b}, {0, 0, 2 - a, 2 - b});
  const Tensor chain = transpose(slice(sum, {0, 0, 1, 1}, {2, 3, 8, 8}), {0, 1, 3, 2});  // [2,3,7,7]
  g.add_output("y", (chain * slice(x, {0, 0, 1, 1}, {2, 3, 8, 8})).id());
  const std::string src = source_of(g);
  EXPECT_EQ(occurrences(src, "for (int64_t r = 0;"), 0) << src;
  EXPECT_GE(occurrences(src, "static_cast<uint32_t>(i)"), 3) << src;
  EXPECT_EQ(occurrences(src, "static_cast<uint32_t>(i0)") + occurrences(src, "static_cast<uint32_t>(i1"), 0) << src;
  Feeds feeds{{"x", counting({2, 3, 9, 9}, 0.5f)}, {"dy", counting({2, 3, 7, 7}, -0.25f)}};
  testkit::expect_same(testkit::run_both(g, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

// A gather's rows in a row loop as wide as a row: the index is read at r, once per row,
// and the table's row read at j, contiguously; out-of-range indices give zero rows.
TEST(RowLoops, AGatherReadsItsIndexOncePerRow) {
  Graph g;
  const Tensor table = placeholder(g, "table", DType::f32, {50, 16});
  const Tensor ids = placeholder(g, "ids", DType::i32, {64});
  g.add_output("y", (gather(table, ids) + 1.0).id());
  const std::string src = source_of(g);
  EXPECT_EQ(occurrences(src, "for (int64_t r = 0;"), 1) << src;
  EXPECT_EQ(occurrences(src, " / 16)") + occurrences(src, " / 16u)"), 0) << src;
  EXPECT_EQ(occurrences(src, "[r]);"), 1) << src;
  Array idx(DType::i32, {64});
  for (int64_t i = 0; i < 64; ++i) idx.set(i, static_cast<double>((i * 7) % 53) - 1);  // -1 and 50..51: zero rows
  Feeds feeds{{"table", counting({50, 16}, 0.5f)}, {"ids", idx}};
  testkit::expect_same(testkit::run_both(g, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

// A gather in a loop that also calls exp (a GRU gate: sigmoid of a row of the input
// weights plus the state's product): the index, its range test and the row's offset are
// computed once per row, before the inner loop, and the inner loop vectorizes (with the
// test inside it, it did not: the step ran scalar).
TEST(RowLoops, AGatherBesideExpIsTestedPerRowAndVectorizes) {
  Graph g;
  const Tensor table = placeholder(g, "table", DType::f32, {50, 40});
  const Tensor ids = placeholder(g, "ids", DType::i32, {64});
  const Tensor h = placeholder(g, "h", DType::f32, {64, 40});
  g.add_output("y", sigmoid(gather(table, ids) + h).id());
  const std::string src = source_of(g);
  const size_t rows = src.find("for (int64_t r = 0;");
  ASSERT_NE(rows, std::string::npos) << src;
  const size_t inner = src.find("#pragma omp simd", rows);
  EXPECT_LT(src.find("[r]);", rows), inner) << src;
  EXPECT_LT(src.find("const bool h", rows), inner) << src;
  EXPECT_NE(src.find("km::exp(", inner), std::string::npos) << src;

  EXPECT_TRUE(testkit::loop_vectorizes(src, inner));

  Array idx(DType::i32, {64});
  for (int64_t i = 0; i < 64; ++i) idx.set(i, static_cast<double>((i * 7) % 53) - 1);  // -1 and 50..51: zero rows
  Feeds feeds{{"table", counting({50, 40}, 0.01f)}, {"ids", idx}, {"h", counting({64, 40}, 0.02f)}};
  testkit::expect_same(testkit::run_both(g, feeds, {}, PrecisionPolicy::original),
                       [](const std::string&) { return testkit::Tolerance{0, 0}; });
}

// A bfloat16 tensor moved unchanged (a head merge, a transpose) is copied as bits: no
// widening and rounding per element, and every pattern arrives as the interpreter copies
// it, a signalling NaN's payload and a subnormal included. A value that is computed is
// still rounded on its way out. Small tensors are read through a widened copy (x86 has
// no 16-bit gather): their bits are kept beside it.
TEST(RowLoops, SixteenBitElementsMovedUnchangedAreCopiedAsBits) {
  for (const int64_t heads : {16, 64}) {  // 4096 elements (widened) and 16384 (read in place)
    Graph g;
    const Tensor x = placeholder(g, "x", DType::bf16, {8, heads, 4, 8});
    g.add_output("merged", reshape(transpose(x, {0, 2, 1, 3}), {8, 4, heads * 8}).id());
    g.add_output("flipped", transpose(reshape(x, {8 * heads, 32}), {1, 0}).id());
    g.add_output("doubled", (transpose(reshape(x, {8 * heads, 32}), {1, 0}) * 2.0).id());
    const std::string src = source_of(g);
    const char* raw = heads == 16 ? "] = static_cast<uint16_t>(wb" : "] = u";
    EXPECT_EQ(occurrences(src, raw), 2) << src;  // merged and flipped store the loaded bits
    EXPECT_EQ(occurrences(src, "] = f2bf("), 1) << src;

    Array in(DType::bf16, {8, heads, 4, 8});
    uint16_t* bits = in.data<uint16_t>();
    for (int64_t i = 0; i < in.numel(); ++i) bits[i] = static_cast<uint16_t>(0x3f80 + (i * 37) % 900);
    bits[5] = 0x7f81;    // a signalling NaN: widening and rounding would quieten it (0x7fc1)
    bits[77] = 0x8000;   // -0
    bits[300] = 0x0001;  // the smallest subnormal
    const auto r = testkit::run_both(g, {{"x", in}}, {}, PrecisionPolicy::original, 1);
    for (const char* name : {"merged", "flipped"}) {
      const Array& want = r.interp.at(0).at(name);
      const Array& got = r.compiled.at(0).at(name);
      ASSERT_EQ(got.dtype(), DType::bf16);
      EXPECT_EQ(std::memcmp(want.bytes(), got.bytes(), want.nbytes()), 0) << name << " of " << heads << " heads";
    }
    EXPECT_EQ(r.compiled.at(0).at("flipped").data<uint16_t>()[5 * 8 * heads], 0x7f81);
  }
}

}  // namespace
}  // namespace kiln
