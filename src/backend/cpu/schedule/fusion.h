// Fusion decisions of the CPU schedule (make_schedule, schedule.cpp): which values get a
// buffer, so that every other value is computed inline by the loops that read it, and
// which loops over the same elements become one multi-output loop.
#pragma once
#include <vector>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// Per node of g: does its value get a buffer? Sources, library/pooling/fallback results
// and reductions always do; a loop value does when it is an output or assigned, when a
// step that is not a loop reads it, when more than one node reads it (it is computed
// once), or when a loop over more elements reads it (it would be recomputed per
// element; constants are the exception, cheaper to recompute than to load, and so are
// widening float casts of values that have buffers). A reduction's input expression is
// fused into the reduction whatever its size.
std::vector<bool> buffered_values(const Graph& g);

// Vertical multi-output fusion: an elementwise step whose first reader is an
// elementwise step over the same number of elements, reading it only at the index it
// writes, joins that step (moving it later is safe: nothing reads it in between).
// Repeats along chains, e.g. a momentum slot and the variable it updates.
void merge_elementwise(Schedule& s);

// After merging: a root that only its own step reads (not an output, not assigned, not
// read by another step, a reduction, a library call or a later step) loses its buffer,
// e.g. a guarded update's new momentum, read by the momentum's select and the weight's
// update in the same loop. The loop still computes it once per element, and no longer
// stores it. The step's last root (its node) always stays.
void drop_internal_roots(Schedule& s);

// After dropping internal roots: a reshape whose step would only copy a buffer (an arena
// value or a feed; not a variable, which an in-place update may overwrite mid-step) into
// its own is no step at all. Its value shares the input's buffer (reshape keeps the
// linear order), so the input's buffer lives until the reshape's last reader; its own
// buffer stays in the list, unplanned and unused. Outputs and assigned values keep their
// copy. The CNN's flatten and unflatten and its input's reshape were 0.6 ms of a 21 ms
// step.
void alias_reshapes(Schedule& s);

// Does every read of `leaf` in the fused expression of `root` happen at the element index
// the loop is writing (so that a loop may write `leaf` or read it as another root)? Only
// elementwise ops without broadcasting and reshapes keep the index.
bool reads_at_same_index(const Schedule& s, ValueId root, ValueId leaf);

// Steps (by index) that read the buffer of v.
std::vector<size_t> readers(const Schedule& s, ValueId v);

}  // namespace kiln::cpu
