#include "backend/cpu/schedule/column_sums.h"

#include <algorithm>
#include <map>

#include "backend/cpu/schedule/fusion.h"

namespace kiln::cpu {
namespace {

// Partial sums on the joined kernel's stack, all sums together: at most 256 KiB.
constexpr int64_t kPartialBytes = 256 * 1024;

// The shape a step's sum reduces, when it is a chunked sum over every axis but the last
// (see column_sum_chunks); else empty.
Shape chunked_column_sum(const Schedule& s, const Step& st) {
  if (st.kind != StepKind::reduce || st.roots.size() != 1) return {};
  const Node& n = s.graph.node(st.node());
  if (n.op != Op::reduce_sum && n.op != Op::reduce_mean) return {};
  const Shape& in = s.graph.node(n.inputs[0]).shape;
  if (in.size() < 2) return {};
  std::vector<int64_t> leading(in.size() - 1);
  for (size_t a = 0; a < leading.size(); ++a) leading[a] = static_cast<int64_t>(a);
  if (n.attrs.ints("axes") != leading) return {};
  return column_sum_chunks(numel(in) / in.back(), in.back()) > 0 ? in : Shape{};
}

// The value of an elementwise step that sum step `st` reads at the index it sums and
// whose step comes first, with that step's index; {-1, 0} if none. `loop_roots`: per step
// already joined, how many of its roots are the loop's (the sums follow them).
std::pair<ValueId, size_t> summed_loop_value(const Schedule& s, const Step& st, const Shape& in,
                                             const std::map<ValueId, size_t>& made_by,
                                             const std::map<size_t, size_t>& loop_roots) {
  const ValueId x = s.graph.node(st.node()).inputs[0];
  std::pair<ValueId, size_t> best{-1, 0};
  for (ValueId leaf : st.reads) {
    const auto at = made_by.find(leaf);
    if (at == made_by.end()) continue;
    const Step& loop = s.steps[at->second];
    const auto joined = loop_roots.find(at->second);
    if (loop.kind != StepKind::elementwise && joined == loop_roots.end()) continue;
    const size_t count = joined == loop_roots.end() ? loop.roots.size() : joined->second;
    if (std::find(loop.roots.begin(), loop.roots.begin() + static_cast<std::ptrdiff_t>(count), leaf) ==
        loop.roots.begin() + static_cast<std::ptrdiff_t>(count))
      continue;  // a sum joined earlier: not an element of the loop
    bool same_shape = true;
    for (size_t r = 0; r < count; ++r) same_shape = same_shape && s.graph.node(loop.roots[r]).shape == in;
    if (!same_shape || (leaf != x && !reads_at_same_index(s, x, leaf))) continue;
    if (best.first < 0 || at->second < best.second) best = {leaf, at->second};
  }
  return best;
}

}  // namespace

int64_t column_sum_chunks(int64_t rows, int64_t columns) {
  if (columns > 2048) return 0;
  const int64_t chunks = std::min<int64_t>({16, rows / 32, 8192 / columns});  // partials: at most 64 KiB
  return chunks >= 4 ? chunks : 0;
}

void join_column_sums(Schedule& s) {
  std::map<ValueId, size_t> made_by;  // arena value -> the step computing it
  for (size_t k = 0; k < s.steps.size(); ++k)
    for (ValueId r : s.steps[k].roots) made_by[r] = k;
  std::vector<bool> gone(s.steps.size(), false);
  std::map<size_t, int64_t> partial_bytes;  // loop step -> its joined sums' partials
  std::map<size_t, size_t> loop_roots;       // loop step -> how many roots are the loop's
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const Shape in = chunked_column_sum(s, s.steps[k]);
    if (in.empty()) continue;
    const auto [x, l] = summed_loop_value(s, s.steps[k], in, made_by, loop_roots);
    if (x < 0) continue;
    // Every other value the sum reads is computed before the loop (or is no step's), or
    // is an element the loop computes, read at the index it writes.
    const ValueId summed = s.graph.node(s.steps[k].node()).inputs[0];
    const auto element = [&](ValueId leaf) {
      const auto& roots = s.steps[l].roots;
      const auto end = roots.begin() + static_cast<std::ptrdiff_t>(loop_roots.count(l) ? loop_roots[l] : roots.size());
      return std::find(roots.begin(), end, leaf) != end && (leaf == summed || reads_at_same_index(s, summed, leaf));
    };
    bool ready = true;
    for (ValueId leaf : s.steps[k].reads) {
      const auto at = made_by.find(leaf);
      ready = ready && (at == made_by.end() || at->second < l || element(leaf));
    }
    const int64_t columns = in.back(), bytes = column_sum_chunks(numel(in) / columns, columns) * columns * 8;
    if (!ready || partial_bytes[l] + bytes > kPartialBytes) continue;
    partial_bytes[l] += bytes;
    Step& loop = s.steps[l];
    loop_roots.emplace(l, loop.roots.size());
    loop.kind = StepKind::reduce;
    loop.roots.push_back(s.steps[k].node());
    for (ValueId leaf : s.steps[k].reads)
      if (std::count(loop.roots.begin(), loop.roots.end(), leaf) == 0 &&
          std::count(loop.reads.begin(), loop.reads.end(), leaf) == 0)
        loop.reads.push_back(leaf);
    made_by[s.steps[k].node()] = l;
    gone[k] = true;
  }
  std::vector<Step> kept;
  for (size_t k = 0; k < s.steps.size(); ++k)
    if (!gone[k]) kept.push_back(std::move(s.steps[k]));
  s.steps = std::move(kept);
}

}  // namespace kiln::cpu
