// The world of a data-parallel job: this process's rank among the processes that
// `mpirun -np N` started, and the collectives they train with (Open MPI underneath).
// A process that no MPI launcher started is a world of one and never touches MPI, so a
// plain `kiln train` pays no MPI start-up.
#pragma once
#include <cstdint>
#include <string>

#include "kiln/dtype.h"

namespace kiln {

class World {
 public:
  // The process's world, set up on first use. Inside an MPI launch (the launcher's
  // environment: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE) MPI is initialised here and
  // finalised at exit; otherwise this is a world of one.
  static World& get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks of this job on this host (1 alone), for the default thread count.
  int local_size() const { return local_size_; }
  bool distributed() const { return size_ > 1; }
  // "rank R: " in a world of more than one rank, else "": the prefix of a rank's errors.
  std::string prefix() const;

  // In place: every rank's `count` elements become their elementwise sum over the ranks.
  // dtype: f32, i32 or i64 (others throw; the all_reduce op sums float16/bfloat16 as f32). Every rank must make the same calls in the
  // same order (graphs of one key schedule them identically).
  void all_reduce_sum(void* data, int64_t count, DType dtype);
  // The same for sums the runtime keeps in double (evaluation metrics, statistics).
  void all_reduce_sum(double* data, int64_t count);
  // In place: `bytes` bytes of rank `root` overwrite every other rank's.
  void broadcast(void* data, int64_t bytes, int root = 0);

  // Ends the whole job from this rank after an error the others cannot see (they may be
  // waiting in a collective): MPI_Abort, which makes mpirun stop every rank and name this
  // one. Returns (does nothing) in a world of one.
  void abort(int status);

  // Threads per rank by default: the cores this process may use, shared by the ranks of
  // this host (at least 1).
  int default_threads() const;

  // Since start: time spent in collectives, bytes reduced by the typed all_reduce_sum
  // (gradients, the loss), and MPI_Allreduce calls made by both all_reduce_sums.
  double collective_seconds() const { return collective_seconds_; }
  int64_t bytes_reduced() const { return bytes_reduced_; }
  int64_t all_reduce_calls() const { return all_reduce_calls_; }

  World(const World&) = delete;
  World& operator=(const World&) = delete;

 private:
  World();
  int rank_ = 0, size_ = 1, local_size_ = 1;
  bool mpi_ = false;
  double collective_seconds_ = 0;
  int64_t bytes_reduced_ = 0, all_reduce_calls_ = 0;
};

// True when the environment says an MPI launcher started this process.
bool launched_by_mpi();

}  // namespace kiln
