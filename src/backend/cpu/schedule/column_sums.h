// Column sums joined to the loop that computes what they sum (make_schedule, schedule.cpp).
#pragma once
#include <cstdint>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// How many chunks of rows a sum over leading axes with `rows` reduced elements per
// column and `columns` outputs streams in (codegen_reduce.cpp): a fixed number, whatever
// the thread count, so the bits do not depend on it; 0 when it is not worth it (many
// columns, or too few rows to split), and the column blocks are walked instead.
int64_t column_sum_chunks(int64_t rows, int64_t columns);

// A sum over every axis but the last (a dense layer's bias gradient, LayerNorm's
// gradients of its scale and shift) that streams row chunks and reads a value an
// elementwise loop computes at the index it writes (its dy: GELU's or ReLU's gradient,
// a residual add) joins that loop: the loop's step computes and stores the value and
// adds it to the chunk's partial sums while it is in registers, so the value (4 MB in
// the GPT's MLP) is not read back from memory. The joined step is a reduce step whose
// roots are the loop's roots, then the sums; it runs where the loop ran, so every other
// value the sum reads must be computed before that. Several sums of the same shape may
// join one loop (LayerNorm's two and the bias gradient all read the same dy).
void join_column_sums(Schedule& s);

}  // namespace kiln::cpu
