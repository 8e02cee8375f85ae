// kiln._core's view of the data-parallel job (kiln::World): `mpirun -np N python3
// script.py` trains as `mpirun -np N kiln train` does. Importing kiln joins the job
// (MPI_Init, only when an MPI launcher started the process: a plain `python3` never touches
// MPI) and gives each rank its share of the host's cores, as `kiln train` does before
// anything else runs.
#include <pybind11/pybind11.h>

#include <omp.h>

#include "kiln/dist/world.h"
#include "module.h"

namespace py = pybind11;

namespace kiln::python {

void bind_world(py::module_& m) {
  World& world = World::get();
  if (world.distributed()) omp_set_num_threads(world.default_threads());  // RunConfig(num_threads=) still wins
  m.def("world_rank", [] { return World::get().rank(); });
  m.def("world_size", [] { return World::get().size(); });
  m.def("world_local_size", [] { return World::get().local_size(); });
  // Ends every rank of the job (MPI_Abort: mpirun stops them all and names this rank);
  // does nothing in a world of one.
  m.def("world_abort", [](int status) { World::get().abort(status); });
  // Waits until every rank gets here (an 8-byte sum): rank 0's checkpoint is written
  // before another rank may end the job.
  m.def("world_barrier", [] {
    py::gil_scoped_release release;
    double one = 1;
    World::get().all_reduce_sum(&one, 1);
  });
  m.def("world_stats", [] {
    const World& w = World::get();
    py::dict d;
    d["collective_seconds"] = w.collective_seconds();
    d["bytes_reduced"] = w.bytes_reduced();
    d["all_reduce_calls"] = w.all_reduce_calls();
    return d;
  });
}

}  // namespace kiln::python
