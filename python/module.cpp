// The Python module touchstone, its native half (_touchstone): the catalog, its cases, the reference,
// every registered backend and the judge, each the C++ the conformance matrix runs, nothing redone
// here. Arrays cross without a copy: a case's tensors and a run's outputs come out as NumPy views of
// the harness's own storage, and arrays handed to judge() are compared where they lie (the buffer
// protocol; touchstone/__init__.py turns DLPack and torch tensors into NumPy arrays first, also
// without a copy).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <charconv>
#include <cstring>
#include <map>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "conformance/check.h"
#include "core/backend.h"
#include "core/case_file.h"
#include "python/arrays.h"

namespace py = pybind11;

namespace ts::python {
namespace {

// A case and the name the report calls it by (the catalog's, or a loaded file's stem).
struct PyCase {
  Case c;
  std::string name;
};
using CasePtr = std::shared_ptr<PyCase>;

struct PyVerdict {
  Verdict v;
  std::string report;
  std::map<std::string, uintptr_t> addresses;  // where each compared output lay: proof nothing was copied
};

// Parameters as Python values: what a kernel's author reads (eps as a float, causal as a bool).
py::object param_value(const std::string& s) {
  if (s == "true" || s == "false") return py::bool_(s == "true");
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i); ec == std::errc() && p == s.data() + s.size())
    return py::int_(i);
  double d = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d); ec == std::errc() && p == s.data() + s.size())
    return py::float_(d);
  return py::str(s);  // an enum: kind=Q4_0
}

// And back: the metadata spelling the op's parser reads.
std::string param_text(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::float_>(v)) return py::str(py::repr(v));
  return py::str(v);
}

std::string case_id(const PyCase& pc) {
  return fmt::format("{}.{}/{}", pc.c.op->name(), pc.name, dtype_name(pc.c.dtype));
}

// The tensors of `m` as NumPy views that keep `owner` alive.
py::dict arrays(const TensorMap& m, py::handle owner, bool writable) {
  py::dict d;
  for (const auto& [name, t] : m) d[py::str(name)] = array_of(t, owner, writable);
  return d;
}

// A map of tensors owned by Python (a capsule): the outputs of a run, a fresh working set.
py::dict owned_arrays(TensorMap m, const std::vector<std::string>& names) {
  auto* held = new TensorMap(std::move(m));
  py::capsule owner(held, [](void* p) { delete static_cast<TensorMap*>(p); });
  py::dict d;
  for (const auto& name : names) d[py::str(name)] = array_of(held->at(name), owner, true);
  return d;
}

CasePtr make_case(const std::string& op_name, const py::object& name_or_params, const std::string& dtype,
                  std::optional<uint64_t> seed) {
  const Op& op = op_or_throw(op_name);
  auto pc = std::make_shared<PyCase>();
  if (py::isinstance<py::str>(name_or_params)) {
    pc->name = name_or_params.cast<std::string>();
    py::gil_scoped_release unlocked;
    pc->c = named_case(op, pc->name, dtype, seed);
    return pc;
  }
  // Parameters of one's own (a model's shape): the op's parser checks them as it checks a file's.
  check(py::isinstance<py::dict>(name_or_params), "case() takes a case name or a dict of parameters");
  ParamMap m;
  for (auto [k, v] : name_or_params.cast<py::dict>()) m[py::str(k)] = param_text(v);
  const auto dt = dtype_from_name(dtype.empty() ? "F32" : dtype);
  check(dt && (*dt == DType::F32 || *dt == DType::F16 || *dt == DType::BF16), "dtype must be F32, F16 or BF16, not '{}'",
        dtype);
  pc->name = "custom";
  const Params p = op.parse(m);
  py::gil_scoped_release unlocked;
  pc->c = generate_case(op, p, *dt, seed.value_or(case_seed(op, params_str(op.to_map(p)), *dt)));
  return pc;
}

// Views of the arrays handed in, checked as the CLI checks a file of outputs (names, dtypes, shapes).
// `held` keeps the arrays referenced while their views are read.
ViewMap output_views(const Case& c, const py::dict& outputs, std::vector<py::array>& held) {
  ViewMap got;
  for (auto [k, v] : outputs) {
    const std::string name = py::str(k);
    const TensorDecl* d = c.decl(name);
    held.push_back(array_for(name, v));
    got.emplace(name, view_of(name, held.back(), d ? std::optional<DType>(d->dtype) : std::nullopt));
  }
  check_output_set(c, got);
  return got;
}

PyVerdict judge(PyCase& pc, const py::dict& outputs, const std::string& producer) {
  Case& c = pc.c;
  std::vector<py::array> held;
  const ViewMap got = output_views(c, outputs, held);
  fill_expected(c);  // under the GIL: it writes the case, which other threads may hold too
  py::gil_scoped_release unlocked;
  PyVerdict r{judge_outputs(c, got), {}, {}};
  r.report = verdict_report("outputs=" + producer, c, pc.name, r.v);
  for (const auto& [name, view] : got) r.addresses[name] = reinterpret_cast<uintptr_t>(view.data);
  return r;
}

// The outputs as a file `touchstone judge CASE OUTPUTS` reads (as `touchstone run` writes them).
void save_outputs(const PyCase& pc, const py::dict& outputs, const std::string& path) {
  std::vector<py::array> held;
  const ViewMap got = output_views(pc.c, outputs, held);
  SafetensorsFile f;
  f.metadata = pc.c.op->to_map(pc.c.params);
  f.metadata["op"] = pc.c.op->name();
  for (const auto& [name, view] : got) {
    Tensor t(view.dtype, view.shape);
    std::memcpy(t.data(), view.data, t.nbytes());
    f.tensors.emplace(name, std::move(t));
  }
  py::gil_scoped_release unlocked;
  write_safetensors(path, f);
}

py::dict run_on(PyCase& pc, const std::string& backend_name) {
  Backend& b = backend(backend_name);
  const Availability av = b.availability();
  check(av.ok, "backend {} is unavailable: {}", backend_name, av.detail);
  TensorMap io;
  {
    py::gil_scoped_release unlocked;
    io = working_set(pc.c);
    run_case(b, pc.c, io);
  }
  return owned_arrays(std::move(io), pc.c.output_names());
}

std::string outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::Fail: return "fail";
    case Outcome::Known: return "known";
    case Outcome::UnexpectedPass: return "unexpected_pass";
    case Outcome::Unsupported: return "unsupported";  // a backend refused the case when it ran it
  }
  return "fail";
}

}  // namespace
}  // namespace ts::python

PYBIND11_MODULE(_touchstone, m) {
  using namespace ts;
  using namespace ts::python;
  m.doc() = "touchstone's catalog, cases, reference, backends and judge (see the package touchstone)";
  // Bad input, as the CLI's one line: a ValueError, so `except ValueError` catches it too.
  py::register_exception<Error>(m, "Error", PyExc_ValueError);

  m.def("ops", [] {
    std::vector<std::string> v;
    for (const Op* op : all_ops()) v.push_back(op->name());
    return v;
  });
  m.def("cases", [](const std::string& op, const std::string& tier) {
    const Tier t = tier_or_throw(tier);
    std::vector<std::string> v;
    for (const CaseSpec& s : op_or_throw(op).cases())
      if (s.tier <= t) v.push_back(s.name);
    return v;
  }, py::arg("op"), py::arg("tier") = "ci");
  // A named case's description without generating it: what the pytest decorator parametrizes over.
  m.def("case_info", [](const std::string& op_name, const std::string& name) {
    const Op& op = op_or_throw(op_name);
    for (const auto* list : {&op.cases(), &op.benches()})
      for (const CaseSpec& s : *list)
        if (s.name == name) {
          std::vector<std::string> dtypes;
          for (DType d : s.dtypes) dtypes.emplace_back(dtype_name(d));
          py::dict info;
          info["tier"] = std::string(tier_name(s.tier));
          info["dtypes"] = dtypes;
          info["variant"] = op.variant(s.params);
          return info;
        }
    fail("{} has no case '{}' (touchstone cases --op {})", op_name, name, op_name);
  });
  m.def("backends", [] { return backend_names(); });

  py::class_<PyCase, CasePtr>(m, "Case")
      .def_property_readonly("op", [](const PyCase& pc) { return pc.c.op->name(); })
      .def_property_readonly("name", [](const PyCase& pc) { return pc.name; })
      .def_property_readonly("id", &case_id)
      .def_property_readonly("dtype", [](const PyCase& pc) { return std::string(dtype_name(pc.c.dtype)); })
      .def_property_readonly("seed", [](const PyCase& pc) { return pc.c.seed; })
      .def_property_readonly("variant", [](const PyCase& pc) { return pc.c.variant; })
      .def_property_readonly("params", [](const PyCase& pc) {
        py::dict d;
        for (const auto& [k, v] : pc.c.op->to_map(pc.c.params)) d[py::str(k)] = param_value(v);
        return d;
      })
      .def_property_readonly("output_names", [](const PyCase& pc) { return pc.c.output_names(); })
      // Read-only views: a kernel that writes its inputs must not change the case it is judged by.
      .def_property_readonly("inputs", [](py::object self) {
        const PyCase& pc = self.cast<const PyCase&>();
        py::dict d;
        for (const auto& [name, t] : pc.c.tensors) {
          const TensorDecl* decl = pc.c.decl(name);
          if (decl && decl->role == Role::Out) continue;
          d[py::str(name)] = array_of(t, self, false);
        }
        return d;
      })
      .def_property_readonly("expected", [](py::object self) {
        PyCase& pc = self.cast<PyCase&>();
        fill_expected(pc.c);  // under the GIL: it writes the case
        return arrays(pc.c.expected, self, false);
      })
      .def("tolerance", [](const PyCase& pc, const std::string& output) {
        check(pc.c.decl(output) != nullptr, "{} has no output '{}'", pc.c.op->name(), output);
        return pc.c.op->tolerance(pc.c.params, pc.c.dtype, output, pc.c.tensors).str();
      })
      // Fresh writable tensors a kernel works in, as the matrix gives a backend: inputs and in-outs
      // copied, outputs poisoned with NaN, so an element the kernel forgets to write fails.
      .def("workspace", [](const PyCase& pc) {
        std::vector<std::string> names;
        for (const auto& d : pc.c.decls) names.push_back(d.name);
        return owned_arrays(working_set(pc.c), names);
      })
      .def("__repr__", [](const PyCase& pc) {
        return fmt::format("<touchstone.Case {} seed={} {}>", case_id(pc), pc.c.seed.value_or(0),
                           params_str(pc.c.op->to_map(pc.c.params)));
      });

  m.def("case", &make_case, py::arg("op"), py::arg("name"), py::arg("dtype") = "", py::arg("seed") = py::none(),
        "A generated case: `name` one of the op's cases (the matrix's seed unless `seed`; `dtype` one of its\n"
        "dtypes, default its first, F32 for most), or a dict of parameters (a shape of one's own).");
  m.def("load", [](const std::string& path) {
    auto pc = std::make_shared<PyCase>();
    pc->name = std::filesystem::path(path).stem().string();
    py::gil_scoped_release unlocked;
    pc->c = load_case(path);
    return pc;
  });
  m.def("save", [](const PyCase& pc, const std::string& path) {
    py::gil_scoped_release unlocked;
    write_safetensors(path, case_to_file(*pc.c.op, pc.c.params, pc.c.tensors, pc.c.expected, pc.c.seed));
  });
  m.def("reference", [](PyCase& pc) { return run_on(pc, "reference"); }, py::arg("case"),
        "The reference's outputs of the case, as a dict of arrays.");
  m.def("run", &run_on, py::arg("case"), py::arg("backend") = "cpu",
        "Any registered backend's outputs of the case (touchstone.backends()), as a dict of arrays.");

  py::class_<OutputVerdict>(m, "OutputResult")
      .def_readonly("name", &OutputVerdict::name)
      .def_property_readonly("passed", [](const OutputVerdict& o) { return o.report.pass(); })
      .def_property_readonly("max_abs", [](const OutputVerdict& o) { return o.report.max_abs; })
      .def_property_readonly("max_rel", [](const OutputVerdict& o) { return o.report.max_rel; })
      .def_property_readonly("nmse", [](const OutputVerdict& o) { return o.report.nmse; })
      .def_property_readonly("bad", [](const OutputVerdict& o) { return o.report.bad; })
      .def_property_readonly("count", [](const OutputVerdict& o) { return o.report.count; })
      .def_property_readonly("not_compared", [](const OutputVerdict& o) { return o.report.skipped; })
      .def_property_readonly("worst", [](const OutputVerdict& o) {
        return o.report.worst < 0 ? std::nullopt : std::optional<int64_t>(o.report.worst);
      })
      .def_property_readonly("worst_got", [](const OutputVerdict& o) { return o.report.worst_got; })
      .def_property_readonly("worst_want", [](const OutputVerdict& o) { return o.report.worst_want; })
      .def_property_readonly("atol", [](const OutputVerdict& o) { return o.tolerance.atol; })
      .def_property_readonly("rtol", [](const OutputVerdict& o) { return o.tolerance.rtol; })
      .def_property_readonly("tolerance", [](const OutputVerdict& o) { return o.tolerance.str(); })
      .def_property_readonly("summary", [](const OutputVerdict& o) { return o.report.summary(); })
      .def("__repr__", [](const OutputVerdict& o) {
        return fmt::format("<touchstone.OutputResult {} {} {}>", o.name, o.report.pass() ? "ok" : "FAIL",
                           o.report.summary());
      });

  py::class_<PyVerdict>(m, "Result")
      .def_property_readonly("passed", [](const PyVerdict& r) { return r.v.pass; })
      .def("__bool__", [](const PyVerdict& r) { return r.v.pass; })
      .def_property_readonly("outputs", [](const PyVerdict& r) {
        py::dict d;
        for (const auto& o : r.v.outputs) d[py::str(o.name)] = py::cast(o);
        return d;
      })
      .def_readonly("report", &PyVerdict::report)
      .def_readonly("addresses", &PyVerdict::addresses)
      // The matrix's rule (conformance/check.h): a listed known failure that passes fails.
      .def("outcome", [](const PyVerdict& r, bool known) {
        static const KnownFailure listed{};
        return outcome_name(classify(r.v, known ? &listed : nullptr));
      }, py::arg("known") = false)
      .def("__str__", [](const PyVerdict& r) { return r.report; })
      .def("__repr__", [](const PyVerdict& r) {
        return fmt::format("<touchstone.Result {}>", r.v.pass ? "PASS" : "FAIL");
      });

  m.def("load_outputs", [](const std::string& path) {
    SafetensorsFile f;
    {
      py::gil_scoped_release unlocked;
      f = read_safetensors(path);
    }
    std::vector<std::string> names;
    for (const auto& [name, t] : f.tensors) names.push_back(name);
    return owned_arrays(std::move(f.tensors), names);
  });
  m.def("save_outputs", &save_outputs, py::arg("case"), py::arg("outputs"), py::arg("path"));
  m.def("judge", &judge, py::arg("case"), py::arg("outputs"), py::arg("producer") = "python");
}
