// The world of a data-parallel job: this process's rank among the processes that
// `mpirun -np N` started, and the collectives they train with (Open MPI underneath).
// A process that no MPI launcher started is a world of one and never touches MPI, so a
// plain `kiln train` pays no MPI start-up.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "kiln/ir/dtype.h"

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

  // The typed all_reduce_sum, started and left to the World's collective thread (which
  // runs the started sums one after another, in the order they were started, and talks to
  // MPI while the caller computes); wait(ticket) returns once that sum is done, rethrowing
  // its error. Every blocking call above first waits for all started sums, so each rank's
  // collectives keep one order. A ticket of 0 (a world of one, nothing to sum) is done.
  int64_t all_reduce_sum_start(void* data, int64_t count, DType dtype);
  // Whether compiled training steps start their gradient sums and compute on
  // (RunConfig::all_reduce_overlap; default on) or sum each bucket where it stands.
  void set_overlap(bool on) { overlap_ = on; }
  bool overlap() const { return overlap_; }
  void wait(int64_t ticket);
  void wait_all();

  // Ends the whole job from this rank after an error the others cannot see (they may be
  // waiting in a collective): MPI_Abort, which makes mpirun stop every rank and name this
  // one. Returns (does nothing) in a world of one.
  void abort(int status);

  // Threads per rank by default: the cores this process may use, shared by the ranks of
  // this host (at least 1).
  int default_threads() const;

  // Since start: time the calling thread spent in collectives (blocking calls, and waiting
  // for started sums: the part of the step the reduction did not overlap), bytes reduced
  // by the typed all_reduce_sums (gradients, the loss), and MPI_Allreduce calls made.
  double collective_seconds() const { return collective_seconds_; }
  int64_t bytes_reduced() const { return bytes_reduced_.load(); }
  int64_t all_reduce_calls() const { return all_reduce_calls_.load(); }
  // Of those, the sums started with all_reduce_sum_start (overlapped).
  int64_t sums_started() const { return sums_started_.load(); }

  World(const World&) = delete;
  World& operator=(const World&) = delete;

 private:
  World();
  struct Started;  // the collective thread's queue (world.cpp)
  void sum_in_place(void* data, int64_t count, DType dtype);
  int rank_ = 0, size_ = 1, local_size_ = 1;
  bool mpi_ = false;
  bool overlap_ = true;
  Started* started_ = nullptr;  // made on first use, never freed (its thread lives to exit)
  double collective_seconds_ = 0;
  std::atomic<int64_t> bytes_reduced_{0}, all_reduce_calls_{0}, sums_started_{0};  // also counted by the collective thread
};

// True when the environment says an MPI launcher started this process.
bool launched_by_mpi();

}  // namespace kiln
