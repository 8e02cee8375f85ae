#include "backend/cpu/schedule/arena_plan.h"

#include <algorithm>

namespace kiln::cpu {

ArenaPlan first_fit(const std::vector<ArenaRequest>& requests) {
  struct Live {
    int64_t offset, bytes;
    int last;
  };
  ArenaPlan plan;
  std::vector<Live> live;
  for (const ArenaRequest& r : requests) {
    // Free what died before this step (a step's inputs stay live while it writes).
    live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.last < r.first; }), live.end());
    const int64_t bytes = (r.bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    plan.unplanned += bytes;
    std::sort(live.begin(), live.end(), [](const Live& x, const Live& y) { return x.offset < y.offset; });
    int64_t at = 0;
    for (const Live& l : live) {
      if (l.offset - at >= bytes) break;
      at = std::max(at, l.offset + l.bytes);
    }
    plan.offsets.push_back(at);
    live.push_back({at, bytes, std::max(r.last, r.first)});
    plan.peak = std::max(plan.peak, at + bytes);
  }
  return plan;
}

void plan_arena(Schedule& s) {
  const Graph& g = s.graph;
  const int end = static_cast<int>(s.steps.size());
  std::vector<int> last(s.buffers.size(), -1);
  for (int k = 0; k < end; ++k)
    for (ValueId r : s.steps[k].reads) last[s.buffer_of[r]] = std::max(last[s.buffer_of[r]], k);
  for (const Output& o : g.outputs()) last[s.buffer_of[o.value]] = end;
  for (ValueId a : g.assigns()) last[s.buffer_of[g.node(a).inputs[1]]] = end;

  std::vector<ArenaRequest> requests;
  std::vector<int> placed;  // buffer index per request
  for (int k = 0; k < end; ++k)
    for (ValueId root : s.steps[k].roots) {
      const int b = s.buffer_of[root];
      if (s.buffers[b].kind != BufferKind::arena) continue;
      requests.push_back({s.buffers[b].bytes, k, last[b]});
      placed.push_back(b);
    }
  const ArenaPlan plan = first_fit(requests);
  for (size_t i = 0; i < placed.size(); ++i) s.buffers[placed[i]].offset = plan.offsets[i];
  s.arena_bytes = plan.peak;
  s.unplanned_bytes = plan.unplanned;
}

}  // namespace kiln::cpu
