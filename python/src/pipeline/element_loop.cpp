// The C++ element loop of Dataset.map (data/element_plan.h, data/element_runner.h) for
// kiln/_src/map_function.py: HostDraws (the host ops' random numbers, also for the Python
// loop), ElementPlan (built from a finished trace) and ElementRunner (its threads).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>

#include "data/element_plan.h"
#include "data/element_runner.h"
#include "data/host_draws.h"
#include "kiln/base/error.h"
#include "module.h"
#include "pipeline/example_specs.h"
#include "pipeline/host_values.h"
#include "pipeline/map_graph.h"

namespace py = pybind11;

namespace kiln::python {

namespace {

using data::HostValue;

data::HostOp host_op(const std::string& kind) {
  static const std::map<std::string, data::HostOp> kinds = {
      {"parse_example", data::HostOp::parse_example}, {"decode_jpeg", data::HostOp::decode_jpeg},
      {"decode_png", data::HostOp::decode_png},       {"decode_raw", data::HostOp::decode_raw},
      {"convert_image", data::HostOp::convert_image}, {"random_crop", data::HostOp::random_crop},
      {"random_flip", data::HostOp::random_flip},     {"jpeg_shape", data::HostOp::jpeg_shape},
      {"decode_and_crop_jpeg", data::HostOp::decode_and_crop_jpeg},
      {"distorted_box", data::HostOp::distorted_box}, {"resize", data::HostOp::resize},
      {"central_crop", data::HostOp::central_crop},   {"expand_dims", data::HostOp::expand_dims},
      {"squeeze", data::HostOp::squeeze},             {"reshape", data::HostOp::reshape},
      {"transpose", data::HostOp::transpose},         {"concat", data::HostOp::concat},
      {"stack", data::HostOp::stack},                 {"unstack", data::HostOp::unstack},
      {"cast", data::HostOp::cast}};
  auto it = kinds.find(kind);
  if (it != kinds.end()) return it->second;
  std::string valid;
  for (const auto& [name, op] : kinds) valid += (valid.empty() ? "" : ", ") + name;
  throw py::value_error("[Dataset.map] host op '" + kind + "' has no C++ form; valid: " + valid);
}


// (kind, inputs, outputs, draw_index, draw_seed, attrs)
data::PlanStep plan_step(const py::tuple& t) {
  data::PlanStep s;
  s.op = host_op(t[0].cast<std::string>());
  s.inputs = t[1].cast<std::vector<int>>();
  s.outputs = t[2].cast<std::vector<int>>();
  s.draw_index = t[3].cast<int64_t>();
  s.draw_seed = t[4].cast<int64_t>();
  const py::dict attrs = t[5].cast<py::dict>();
  auto get = [&](const char* key) { return attrs[key]; };
  switch (s.op) {
    case data::HostOp::parse_example: s.features = feature_specs(get("features").cast<py::list>()); break;
    case data::HostOp::decode_jpeg:
    case data::HostOp::decode_and_crop_jpeg:
      s.channels = get("channels").cast<int>();
      s.dct = get("dct").cast<std::string>();
      s.fancy_upscaling = get("fancy").cast<bool>();
      break;
    case data::HostOp::decode_png:
      s.channels = get("channels").cast<int>();
      s.sixteen_bit = get("sixteen").cast<bool>();
      break;
    case data::HostOp::decode_raw:
      s.to_dtype = get("to").cast<std::string>();
      s.type_name = get("name").cast<std::string>();
      s.little_endian = get("little_endian").cast<bool>();
      s.fixed_length = get("fixed_length").cast<int64_t>();
      break;
    case data::HostOp::convert_image: s.to_dtype = get("to").cast<std::string>(); break;
    case data::HostOp::random_crop: s.size = get("size").cast<std::vector<int64_t>>(); break;
    case data::HostOp::random_flip: s.axis_index = get("axis").cast<int>(); break;
    case data::HostOp::jpeg_shape:
    case data::HostOp::cast: s.to_dtype = get("to").cast<std::string>(); break;
    case data::HostOp::distorted_box: s.box = box_settings(attrs); break;
    case data::HostOp::resize:
      s.resize = resize_spec(attrs);
      s.op_name = get("op").cast<std::string>();
      break;
    case data::HostOp::central_crop: s.fraction = get("fraction").cast<double>(); break;
    case data::HostOp::squeeze:
    case data::HostOp::reshape:
    case data::HostOp::transpose: s.size = get("ints").cast<std::vector<int64_t>>(); break;
    case data::HostOp::expand_dims:
    case data::HostOp::concat:
    case data::HostOp::stack:
    case data::HostOp::unstack: s.axis = get("axis").cast<int64_t>(); break;
  }
  return s;
}

py::list python_values(const std::vector<HostValue>& values) {
  py::list out;
  for (const auto& v : values) out.append(python_value(v));
  return out;
}

}  // namespace

// numpy's kind and itemsize ("u1", "f4", "b1"): HostValue's dtype codes.
static std::string typestr(const py::dtype& d) { return std::string(1, d.kind()) + std::to_string(d.itemsize()); }

HostValue host_value(const py::handle& leaf) {
  if (py::isinstance<py::bytes>(leaf)) return HostValue::of_bytes(leaf.cast<std::string>());
  py::array a = py::array::ensure(leaf, py::array::c_style);
  if (!a) throw py::type_error("[Dataset.map] an element's component is a " + std::string(py::str(leaf.get_type())) +
                               "; the C++ element loop takes bytes and numeric arrays");
  HostValue v = HostValue::numeric(typestr(a.dtype()), std::vector<int64_t>(a.shape(), a.shape() + a.ndim()));
  std::memcpy(v.raw(), a.data(), v.data->size());
  return v;
}

py::object python_value(const HostValue& v) {
  if (v.is_bytes) return py::bytes(v.bytes);
  auto* keep = new std::shared_ptr<std::vector<uint8_t>>(v.data);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<std::vector<uint8_t>>*>(p); });
  const std::string code = (v.itemsize() == 1 ? "|" : "<") + v.dtype;
  return py::array(py::dtype(code), v.shape, v.data->data(), owner);
}

// Rows start .. start+count-1 of `columns` (numeric arrays of the same first dimension:
// each element's leaves, stacked) submitted as elements at stream positions start.., rank
// 0: a from_tensor_slices dataset's map with no Python per element (kiln/_src/map_loops.py).
static int64_t submit_rows(data::ElementRunner& r, const py::list& columns, int64_t start, int64_t count) {
  std::vector<py::array> cols;
  for (const auto& c : columns) {
    py::array a = py::array::ensure(c, py::array::c_style);
    if (!a || a.ndim() < 1 || std::string("biuf").find(a.dtype().kind()) == std::string::npos)
      throw py::type_error("[Dataset.map] submit_rows takes numeric arrays of rows");
    if (start < 0 || count < 0 || start + count > a.shape(0))
      throw py::value_error("[Dataset.map] rows " + std::to_string(start) + ".." + std::to_string(start + count) +
                            " of an array of " + std::to_string(a.shape(0)));
    cols.push_back(a);
  }
  std::vector<std::vector<HostValue>> chunk(count);
  std::vector<uint64_t> at(count);
  for (int64_t i = 0; i < count; ++i) {
    for (const py::array& a : cols) {
      HostValue v = HostValue::numeric(typestr(a.dtype()), std::vector<int64_t>(a.shape() + 1, a.shape() + a.ndim()));
      const size_t row = v.data->size();
      std::memcpy(v.raw(), static_cast<const char*>(a.data()) + (start + i) * row, row);
      chunk[i].push_back(std::move(v));
    }
    at[i] = static_cast<uint64_t>(start + i);
  }
  return r.submit(std::move(chunk), std::move(at), 0);
}

void bind_element_loop(py::module_& m) {
  py::class_<data::HostDraws>(m, "HostDraws")
      .def(py::init([](py::int_ seed, py::int_ position, py::int_ rank, py::int_ index, int64_t op_seed) {
             auto u64 = [](const py::int_& x) { return x.cast<uint64_t>(); };
             return data::HostDraws(u64(seed), u64(position), u64(rank), u64(index), op_seed);
           }),
           py::arg("seed"), py::arg("position"), py::arg("rank"), py::arg("index"), py::arg("op_seed"))
      .def("uniform", &data::HostDraws::uniform)
      .def("uniform_f32", &data::HostDraws::uniform_f32)
      .def("integer", &data::HostDraws::integer);

  py::class_<data::ElementPlan, std::shared_ptr<data::ElementPlan>>(m, "ElementPlan")
      // graph: the trace's MapGraph (None: the function has no graph outputs); steps:
      // (kind, inputs, outputs, draw_index, draw_seed, attrs); inputs: (slot, dtype, shape);
      // outputs: ("graph" | "slot", index[, numpy code of a narrow graph output]).
      .def(py::init([](std::shared_ptr<MapGraph> graph, int element_slots, int slots, const py::list& steps,
                       const py::list& inputs, int random_slots, py::int_ seed, const py::list& outputs) {
        data::ElementPlan::Spec spec;
        spec.element_slots = element_slots;
        spec.slots = slots;
        for (const auto& s : steps) spec.steps.push_back(plan_step(s.cast<py::tuple>()));
        for (const auto& i : inputs) {
          auto t = i.cast<py::tuple>();
          spec.inputs.push_back({t[0].cast<int>(), parse_dtype(t[1].cast<std::string>()), t[2].cast<Shape>()});
        }
        spec.random_slots = random_slots;
        spec.seed = seed.cast<uint64_t>();
        for (const auto& o : outputs) {
          auto t = o.cast<py::tuple>();
          spec.outputs.push_back({t[0].cast<std::string>() == "graph", t[1].cast<int>(),
                                  t.size() > 2 ? t[2].cast<std::string>() : std::string()});
        }
        data::GraphRun run;
        if (graph) run = [graph](std::vector<Array> in) { return graph->run_arrays(std::move(in)); };
        return std::make_shared<data::ElementPlan>(std::move(spec), std::move(run));
      }));

  py::class_<data::ElementRunner>(m, "ElementRunner")
      .def(py::init<std::shared_ptr<const data::ElementPlan>, int>(), py::arg("plan"), py::arg("threads"))
      .def_property_readonly("threads", &data::ElementRunner::threads)
      // elements: a list of each element's leaves (bytes or numeric arrays); positions: theirs in the stream.
      .def("submit", [](data::ElementRunner& r, const py::list& elements, const py::list& positions, py::int_ rank) {
        std::vector<std::vector<HostValue>> chunk;
        for (const auto& e : elements) {
          std::vector<HostValue> leaves;
          for (const auto& leaf : e.cast<py::list>()) leaves.push_back(host_value(leaf));
          chunk.push_back(std::move(leaves));
        }
        std::vector<uint64_t> at;
        for (const auto& p : positions) at.push_back(p.cast<py::int_>().cast<uint64_t>());
        return r.submit(std::move(chunk), std::move(at), rank.cast<uint64_t>());
      })
      .def("submit_rows", &submit_rows)
      // ("stacked", leaves stacked along a new axis 0, None) when stack and they stack, else
      // ("elements", [leaves, or None where the plan did not fit the element], raise): the
      // results up to the first element that failed, and a function raising its error (None
      // when none failed).
      .def("take", [](data::ElementRunner& r, int64_t ticket, bool stack) {
        data::ElementRunner::Taken taken;
        std::optional<std::vector<HostValue>> stacked;
        {
          py::gil_scoped_release release;
          taken = r.take(ticket);
          if (stack && !taken.error) stacked = data::stack_results(taken.results);
        }
        if (stacked) return py::make_tuple("stacked", python_values(*stacked), py::none());
        py::list out;
        for (const auto& e : taken.results) out.append(e ? py::object(python_values(*e)) : py::object(py::none()));
        py::object raise = py::none();
        if (taken.error) raise = py::cpp_function([error = taken.error] { std::rethrow_exception(error); });
        return py::make_tuple("elements", out, raise);
      });
}

}  // namespace kiln::python
