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
  if (in.size() < 2 || numel(in) == 0) return {};
  std::vector<int64_t> leading(in.size() - 1);
  for (size_t a = 0; a < leading.size(); ++a) leading[a] = static_cast<int64_t>(a);
  if (n.attrs.ints("axes") != leading) return {};
  return column_sum_chunks(numel(in) / in.back(), in.back()) > 0 ? in : Shape{};
}

// The loop roots of step k (the sums joined to it follow them), or none if it is no loop.
std::vector<ValueId> loop_roots_of(const Schedule& s, size_t k, const std::map<size_t, size_t>& joined) {
  const Step& st = s.steps[k];
  const auto j = joined.find(k);
  if (st.kind != StepKind::elementwise && j == joined.end()) return {};
  return {st.roots.begin(), st.roots.begin() + static_cast<std::ptrdiff_t>(j == joined.end() ? st.roots.size() : j->second)};
}

// The loops that sum step k could join, earliest first: loops over its input's shape
// that compute or read, at the index they write, a value the sum reads at the index it
// sums (so that the joined loop loads or computes it once for both); before it, or after
// it and before the first step that reads the sum.
std::vector<size_t> candidate_loops(const Schedule& s, size_t k, const Shape& in, const std::map<size_t, size_t>& joined) {
  const ValueId summed = s.graph.node(s.steps[k].node()).inputs[0];
  size_t end = s.steps.size();
  for (size_t r : readers(s, s.steps[k].node())) end = std::min(end, r);
  std::vector<size_t> out;
  for (size_t l = 0; l < end; ++l) {
    if (l == k) continue;
    const std::vector<ValueId> roots = loop_roots_of(s, l, joined);
    bool fits = !roots.empty();
    for (ValueId r : roots) fits = fits && s.graph.node(r).shape == in;
    if (!fits) continue;
    for (ValueId x : s.steps[k].reads) {
      if (x != summed && !reads_at_same_index(s, summed, x)) continue;
      const bool computes = std::count(roots.begin(), roots.end(), x) > 0;
      bool reads = std::count(s.steps[l].reads.begin(), s.steps[l].reads.end(), x) > 0;
      for (ValueId r : roots) reads = reads && reads_at_same_index(s, r, x);
      if (computes || reads) {
        out.push_back(l);
        break;
      }
    }
  }
  return out;
}

}  // namespace

int64_t column_sum_chunks(int64_t rows, int64_t columns) {
  if (columns <= 0 || columns > 2048) return 0;
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
    // Every other value the sum reads is computed before the loop (or is no step's), or
    // is an element the loop computes, read at the index it writes.
    const ValueId summed = s.graph.node(s.steps[k].node()).inputs[0];
    auto ready = [&](size_t l) {
      const std::vector<ValueId> roots = loop_roots_of(s, l, loop_roots);
      for (ValueId leaf : s.steps[k].reads) {
        const auto at = made_by.find(leaf);
        const bool element = std::count(roots.begin(), roots.end(), leaf) > 0 &&
                             (leaf == summed || reads_at_same_index(s, summed, leaf));
        if (at != made_by.end() && at->second >= l && !element) return false;
      }
      return true;
    };
    const int64_t columns = in.back(), bytes = column_sum_chunks(numel(in) / columns, columns) * columns * 8;
    size_t l = k;
    for (size_t c : candidate_loops(s, k, in, loop_roots))
      if (ready(c) && partial_bytes[c] + bytes <= kPartialBytes) {
        l = c;
        break;
      }
    if (l == k) continue;
    partial_bytes[l] += bytes;
    Step& loop = s.steps[l];
    loop_roots.emplace(l, loop.roots.size());  // no-op when it has sums already
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
