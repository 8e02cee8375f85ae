// Column sums joined to the loop that computes what they sum (make_schedule, schedule.cpp).
#pragma once
#include <cstdint>

#include "backend/cpu/schedule/schedule.h"

namespace kiln::cpu {

// How many chunks of rows a sum over leading axes with `rows` reduced elements per
// column and `columns` outputs streams in (codegen/reduce.cpp): a fixed number, whatever
// the thread count, so the bits do not depend on it; 0 when it is not worth it (many
// columns, or too few rows to split), and the column blocks are walked instead.
int64_t column_sum_chunks(int64_t rows, int64_t columns);

// A sum over every axis but the last (a dense layer's bias gradient, LayerNorm's
// gradients of its scale and shift) that streams row chunks joins an elementwise loop
// over the same shape that computes or reads, at the index it writes, a value the sum
// reads: its dy (GELU's or ReLU's gradient, a residual add; or LayerNorm's input
// gradient, which reads the dy a product computed). The joined step walks the row chunks
// the sum alone would, computes and stores the loop's elements and adds the sum's to
// the chunk's partials while the values are in registers, so the sum does not read them
// back from memory (4 MB per GPT MLP layer). It is a reduce step whose roots are the
// loop's, then the sums, and it runs where the loop ran: every other value a sum reads
// must be computed before that, and nothing before it may read the sum (a sum moves to a
// later loop only if its first reader comes after). Several sums of the same shape may
// join one loop (LayerNorm's two both read the dy its input gradient reads).
void join_column_sums(Schedule& s);

}  // namespace kiln::cpu
