// The verifier on hand-made bad graphs (parsed from text, or assembled with
// add_unchecked): every error names the node it is about.
#include <gtest/gtest.h>

#include "kiln/base/error.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_graph(text);
  } catch (const GraphError& e) {
    return e.what();
  }
  return "(no GraphError)";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << (needle) << "' not in: " << (haystack)

const char kHeader[] = "kiln-graph v1\n";
const char kPlaceholder[] = "%0 = placeholder() {dtype=\"f32\", shape=[2]} : f32[2] \"x\"\n";

TEST(Verify, AcceptsAWellFormedGraph) {
  const std::string text = std::string(kHeader) + kPlaceholder +
                           "%1 = variable() {dtype=\"f32\", init=\"zeros\", shape=[2]} : f32[2] \"v\"\n"
                           "%2 = add(%0, %1) : f32[2]\n"
                           "%3 = assign(%1, %2) : f32[2]\n"
                           "output \"sum\" = %2\n";
  const Graph g = parse_graph(text);
  EXPECT_EQ(g.size(), 4u);
  EXPECT_NO_THROW(verify(g));
}

TEST(Verify, DanglingInputInText) {
  const std::string msg = parse_error(std::string(kHeader) + kPlaceholder + "%1 = neg(%5) : f32[2]\n");
  EXPECT_CONTAINS(msg, "line 3");
  EXPECT_CONTAINS(msg, "%5");
  EXPECT_CONTAINS(msg, "%1 = neg");
}

TEST(Verify, DanglingInputAddedUnchecked) {
  Graph g = parse_graph(std::string(kHeader) + kPlaceholder);
  g.add_unchecked(Node{Op::neg, {3}, {}, DType::f32, {2}, "bad"});
  try {
    verify(g);
    FAIL() << "expected GraphError";
  } catch (const GraphError& e) {
    EXPECT_CONTAINS(e.what(), "%1 (neg 'bad')");
    EXPECT_CONTAINS(e.what(), "%3");
  }
}

TEST(Verify, WrongRecordedShapeOrDtype) {
  std::string msg = parse_error(std::string(kHeader) + kPlaceholder + "%1 = neg(%0) : f32[3]\n");
  EXPECT_CONTAINS(msg, "%1 (neg)");
  EXPECT_CONTAINS(msg, "f32[3]");
  EXPECT_CONTAINS(msg, "f32[2]");
  msg = parse_error(std::string(kHeader) + kPlaceholder + "%1 = exp(%0) : f16[2] \"e\"\n");
  EXPECT_CONTAINS(msg, "%1 (exp 'e')");
}

TEST(Verify, InferenceErrorsNameTheNode) {
  const std::string msg = parse_error(std::string(kHeader) + kPlaceholder +
                                      "%1 = placeholder() {dtype=\"f32\", shape=[3]} : f32[3] \"y\"\n"
                                      "%2 = add(%0, %1) : f32[3]\n");
  EXPECT_CONTAINS(msg, "%2 (add)");
  EXPECT_CONTAINS(msg, "broadcast");
}

TEST(Verify, WrongArity) {
  const std::string msg = parse_error(std::string(kHeader) + kPlaceholder + "%1 = neg(%0, %0) : f32[2]\n");
  EXPECT_CONTAINS(msg, "%1 (neg)");
  EXPECT_CONTAINS(msg, "input");
}

TEST(Verify, UnnamedInterfaceNodes) {
  std::string msg = parse_error(std::string(kHeader) +
                                "%0 = variable() {dtype=\"f32\", init=\"zeros\", shape=[2]} : f32[2]\n");
  EXPECT_CONTAINS(msg, "%0 (variable)");
  EXPECT_CONTAINS(msg, "named");
  msg = parse_error(std::string(kHeader) + "%0 = placeholder() {dtype=\"f32\", shape=[2]} : f32[2]\n");
  EXPECT_CONTAINS(msg, "%0 (placeholder)");
}

TEST(Verify, VariableWithoutInit) {
  const std::string msg =
      parse_error(std::string(kHeader) + "%0 = variable() {dtype=\"f32\", shape=[2]} : f32[2] \"v\"\n");
  EXPECT_CONTAINS(msg, "%0 (variable 'v')");
  EXPECT_CONTAINS(msg, "init");
}

TEST(Verify, VariableAssignedTwice) {
  const std::string msg = parse_error(std::string(kHeader) + kPlaceholder +
                                      "%1 = variable() {dtype=\"f32\", init=\"zeros\", shape=[2]} : f32[2] \"v\"\n"
                                      "%2 = assign(%1, %0) : f32[2]\n"
                                      "%3 = assign(%1, %1) : f32[2]\n");
  EXPECT_CONTAINS(msg, "%3 (assign)");
  EXPECT_CONTAINS(msg, "'v'");
  EXPECT_CONTAINS(msg, "twice");
}

TEST(Verify, DuplicateNames) {
  const std::string msg = parse_error(std::string(kHeader) + kPlaceholder +
                                      "%1 = placeholder() {dtype=\"f32\", shape=[2]} : f32[2] \"x\"\n");
  EXPECT_CONTAINS(msg, "'x'");
  EXPECT_CONTAINS(msg, "%0 (placeholder 'x')");
}

TEST(Verify, BadOutputs) {
  std::string msg = parse_error(std::string(kHeader) + kPlaceholder + "output \"y\" = %4\n");
  EXPECT_CONTAINS(msg, "%4");
  msg = parse_error(std::string(kHeader) + kPlaceholder + "output \"y\" = %0\noutput \"y\" = %0\n");
  EXPECT_CONTAINS(msg, "'y'");
}

TEST(Verify, ParseErrorsGiveTheLine) {
  std::string msg = parse_error(std::string(kHeader) + kPlaceholder + "%1 = frobnicate(%0) : f32[2]\n");
  EXPECT_CONTAINS(msg, "[parse] line 3");
  EXPECT_CONTAINS(msg, "frobnicate");
  msg = parse_error(std::string(kHeader) + kPlaceholder + "%1 = neg(%0) : f64[2]\n");
  EXPECT_CONTAINS(msg, "f64");
  msg = parse_error(std::string(kHeader) + "%1 = placeholder() {dtype=\"f32\", shape=[2]} : f32[2] \"x\"\n");
  EXPECT_CONTAINS(msg, "%0");
  msg = parse_error("kiln-graph v2\n");
  EXPECT_CONTAINS(msg, "header");
  msg = parse_error("");
  EXPECT_CONTAINS(msg, "[parse]");
}

}  // namespace
}  // namespace kiln
