#include "kiln/dist/world.h"
#include "kiln/base/settings.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <omp.h>

#include "kiln/base/error.h"

namespace kiln {
namespace {

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A launcher's count: a positive number, else `fallback` (a launcher's odd value is not
// the user's error).
int env_int(const char* name, int fallback) {
  const std::string v = setting_text(name);
  int n = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  return r.ec == std::errc() && r.ptr == v.data() + v.size() && n > 0 ? n : fallback;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::f32: return MPI_FLOAT;
    case DType::i32: return MPI_INT32_T;
    case DType::i64: return MPI_INT64_T;
    case DType::f16:
    case DType::bf16:
    case DType::boolean: break;
  }
  KILN_THROW(GraphError) << "[all_reduce] " << dtype_name(t) << " is not reduced across ranks; valid: f32, i32, i64";
}

// At exit (glibc's on_exit, which passes the status): a clean exit leaves the job with
// MPI_Finalize, which waits for every rank. A failing one ends the job instead, since the
// other ranks may be waiting for this one in a collective and would never reach their own
// MPI_Finalize: `sys.exit(1)` in a Python script on one rank, or any exit(n != 0). 130 is
// the interrupt that every rank agreed on after the same step (data_parallel.h,
// on_any_rank): all leave together, once rank 0 has saved its checkpoint.
void leave_job_at_exit(int status, void*) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1 && status != 0 && status != 130) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "kiln: rank %d: error: exiting with status %d; ending every rank of the job\n", rank, status);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  MPI_Finalize();
}

}  // namespace

bool launched_by_mpi() {
  return setting_value("OMPI_COMM_WORLD_SIZE") || setting_value("PMIX_RANK") || setting_value("PMI_SIZE");
}

World& World::get() {
  static World world;
  return world;
}

World::World() {
  if (!launched_by_mpi()) return;
  // One thread at a time talks to MPI: the one running the step loop (in Python, the
  // thread that calls train(), not necessarily the one that imported kiln).
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    KILN_THROW(Error) << "[mpi] MPI_Init failed";
  mpi_ = true;
  ::on_exit(leave_job_at_exit, nullptr);
  // Errors come back as codes, turned into kiln errors that name the rank; the job then
  // ends through abort() (kiln's error path), never by hanging in a collective.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  local_size_ = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", env_int("MPI_LOCALNRANKS", 1));
}

std::string World::prefix() const { return size_ > 1 ? "rank " + std::to_string(rank_) + ": " : ""; }

// The typed MPI_Allreduce, in pieces below 2^30 elements (MPI counts are int); from the
// caller's thread, or from the collective thread for started sums. (Measured on the test
// hosts: a collective thread that polls MPI_Iallreduce with pauses instead of blocking
// waited longer and slowed the step, since Open MPI's TCP transfer progresses only inside
// MPI calls.)
void World::sum_in_place(void* data, int64_t count, DType dtype) {
  const MPI_Datatype type = mpi_type(dtype);
  auto* p = static_cast<std::byte*>(data);
  const int64_t piece = int64_t{1} << 30;
  for (int64_t done = 0; done < count; done += piece) {
    const int n = static_cast<int>(std::min(piece, count - done));
    const int rc = MPI_Allreduce(MPI_IN_PLACE, p + done * static_cast<int64_t>(dtype_size(dtype)), n, type, MPI_SUM,
                                 MPI_COMM_WORLD);
    ++all_reduce_calls_;
    if (rc != MPI_SUCCESS)
      KILN_THROW(Error) << "[all_reduce] " << prefix() << "the sum over " << size_
                        << " ranks failed (another rank may have died): " << mpi_error_text(rc);
  }
  bytes_reduced_ += count * static_cast<int64_t>(dtype_size(dtype));
}

void World::all_reduce_sum(void* data, int64_t count, DType dtype) {
  if (!mpi_ || size_ == 1 || count == 0) return;
  wait_all();
  const double t0 = seconds_now();
  sum_in_place(data, count, dtype);
  collective_seconds_ += seconds_now() - t0;
}

void World::all_reduce_sum(double* data, int64_t count) {
  if (!mpi_ || size_ == 1 || count == 0) return;
  wait_all();
  const double t0 = seconds_now();
  const int rc = MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS)
    KILN_THROW(Error) << "[all_reduce] " << prefix() << "the sum over " << size_
                      << " ranks failed (another rank may have died): " << mpi_error_text(rc);
  collective_seconds_ += seconds_now() - t0;
  ++all_reduce_calls_;
}

void World::broadcast(void* data, int64_t bytes, int root) {
  if (!mpi_ || size_ == 1 || bytes == 0) return;
  wait_all();
  const double t0 = seconds_now();
  auto* p = static_cast<std::byte*>(data);
  const int64_t piece = int64_t{1} << 30;
  for (int64_t done = 0; done < bytes; done += piece) {
    const int n = static_cast<int>(std::min(piece, bytes - done));
    const int rc = MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      KILN_THROW(Error) << "[broadcast] " << prefix() << "receiving rank " << root
                        << "'s values failed (another rank may have died): " << mpi_error_text(rc);
  }
  collective_seconds_ += seconds_now() - t0;
}

// Started sums: a FIFO served by one thread. MPI is initialised SERIALIZED; the caller's
// thread makes its own MPI calls only after wait_all(), when this thread is idle, so two
// threads never talk to MPI at once.
struct World::Started {
  struct Sum {
    int64_t ticket;
    void* data;
    int64_t count;
    DType dtype;
  };
  std::mutex mu;
  std::condition_variable work, done;
  std::deque<Sum> queue;
  int64_t issued = 0, finished = 0;
  std::map<int64_t, std::exception_ptr> errors;
};

int64_t World::all_reduce_sum_start(void* data, int64_t count, DType dtype) {
  if (!mpi_ || size_ == 1 || count == 0) return 0;
  mpi_type(dtype);  // an unsupported type is the caller's error, now
  if (!started_) {
    started_ = new Started;
    std::thread([this, q = started_] {
      std::unique_lock lock(q->mu);
      for (;;) {
        q->work.wait(lock, [q] { return !q->queue.empty(); });
        const Started::Sum sum = q->queue.front();
        lock.unlock();
        std::exception_ptr error;
        try {
          sum_in_place(sum.data, sum.count, sum.dtype);
        } catch (...) {
          error = std::current_exception();
        }
        lock.lock();
        q->queue.pop_front();
        if (error) q->errors[sum.ticket] = error;
        q->finished = sum.ticket;
        q->done.notify_all();
      }
    }).detach();
  }
  std::lock_guard lock(started_->mu);
  const int64_t ticket = ++started_->issued;
  ++sums_started_;
  started_->queue.push_back({ticket, data, count, dtype});
  started_->work.notify_one();
  return ticket;
}

void World::wait(int64_t ticket) {
  if (ticket <= 0 || !started_) return;
  const double t0 = seconds_now();
  std::unique_lock lock(started_->mu);
  started_->done.wait(lock, [&] { return started_->finished >= ticket; });
  collective_seconds_ += seconds_now() - t0;
  const auto it = started_->errors.find(ticket);
  if (it == started_->errors.end()) return;
  const std::exception_ptr error = it->second;
  started_->errors.erase(it);
  std::rethrow_exception(error);
}

void World::wait_all() {
  if (!started_) return;
  int64_t last = 0;
  {
    std::lock_guard lock(started_->mu);
    last = started_->issued;
  }
  wait(last);
  std::lock_guard lock(started_->mu);  // an earlier sum's error, if nobody waited for it
  if (!started_->errors.empty()) {
    const std::exception_ptr error = started_->errors.begin()->second;
    started_->errors.clear();
    std::rethrow_exception(error);
  }
}

void World::abort(int status) {
  if (!mpi_ || size_ == 1) return;
  MPI_Abort(MPI_COMM_WORLD, status);
}

int World::default_threads() const {
  const int usable = omp_get_num_procs();  // honours the CPU affinity mpirun binds a rank to
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int shared = static_cast<int>(std::max<long>(1, online / std::max(1, local_size_)));
  return std::max(1, std::min(usable, shared));
}

}  // namespace kiln
