// The `infer` Python module: infer::Session for Python, numpy arrays in and out.
//
//   import infer, numpy as np
//   s = infer.Session("models/digits_cnn.onnx")
//   logits = s.run({"image": np.load("models/digits_samples.npy")})["logits"]
//
// A thin layer over the public C++ API (infer/infer.hpp): the deployment file and the
// option merge are infer-run's own (tools/infer-run/run_plan.hpp), the plan's dict is
// infer-run's --json "plan" object. Every failure raises infer.Error with the message
// infer-run prints.
#include <dlfcn.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "config/deployment_config.hpp"
#include "infer/infer.hpp"
#include "report.hpp"
#include "run_plan.hpp"

namespace infer::python {
namespace {

// infer.Error, created at import; never freed (it must outlive every module object).
PyObject* g_error = nullptr;

// The plugin folders next to this module: <dir>/../lib/infer/plugins in the build tree
// (build/python), <dir>/../../infer/plugins when installed (<prefix>/lib/python3*/...).
std::vector<std::string> module_plugin_dirs() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_plugin_dirs), &info) == 0 || info.dli_fname == nullptr)
    return {};
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path here = fs::weakly_canonical(fs::path(info.dli_fname), ec).parent_path();
  std::vector<std::string> out;
  for (const fs::path& dir :
       {here / ".." / "lib" / "infer" / "plugins", here / ".." / ".." / "infer" / "plugins"}) {
    const fs::path normal = dir.lexically_normal();
    if (fs::is_directory(normal, ec)) out.push_back(normal.string());
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string path_text(const py::handle& path) {
  return py::str(py::module_::import("os").attr("fspath")(path)).cast<std::string>();
}

// An input or output as the model declares it.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  py::object shape;  // list of int / str (symbol) / None (unknown), or None for unknown rank

  static ValueInfo from(const TensorInfo& t) {
    ValueInfo v;
    v.name = t.name;
    v.dtype = t.dtype;
    if (!t.rank_known) {
      v.shape = py::none();
      return v;
    }
    py::list dims;
    for (size_t i = 0; i < t.dims.size(); ++i) {
      if (t.dims[i] >= 0)
        dims.append(t.dims[i]);
      else if (i < t.dim_params.size() && !t.dim_params[i].empty())
        dims.append(t.dim_params[i]);
      else
        dims.append(py::none());
    }
    v.shape = std::move(dims);
    return v;
  }
  py::object numpy_dtype_or_none() const {
    std::optional<py::dtype> d = numpy_dtype(dtype);
    return d ? py::object(*d) : py::object(py::none());
  }
  std::string repr() const {
    std::string shape_text = py::repr(shape).cast<std::string>();
    return "ValueInfo(name='" + name + "', dtype=" + std::string(dtype_name(dtype)) +
           ", shape=" + shape_text + ")";
  }
};

// The partitioner's plan: the --explain text and infer-run's --json "plan" object.
struct Plan {
  std::string text;
  std::string json;
  py::object to_dict() const { return py::module_::import("json").attr("loads")(json); }
};

class PySession {
 public:
  PySession(const py::object& path, const py::object& backends, const py::object& threads,
            const py::object& optimization_level, const py::object& precision,
            const py::object& config, const py::object& plugin_dirs) {
    cli::CliArgs args;
    if (!path.is_none()) args.model = path_text(path);
    if (!backends.is_none()) {
      if (py::isinstance<py::str>(backends))
        raise_error("backends: expected a list of backend names such as ['cpu'], got the string '" +
                    backends.cast<std::string>() + "'");
      args.backends = backends.cast<std::vector<std::string>>();
      if (args.backends->empty())
        raise_error("backends: the list is empty; give at least one, e.g. ['cpu']");
    }
    if (!threads.is_none()) {
      const int n = threads.cast<int>();
      if (n < 0)
        raise_error("threads: " + std::to_string(n) + " is negative (0: one per hardware thread)");
      args.threads = n;
    }
    if (!optimization_level.is_none()) {
      const int level = optimization_level.cast<int>();
      if (level < 0 || level > 3)
        raise_error("optimization_level: " + std::to_string(level) + " is not one of 0, 1, 2, 3");
      args.opt_level = level;
    }
    if (!precision.is_none()) {
      const std::string p = precision.cast<std::string>();
      Precision parsed;
      if (!parse_precision(p, &parsed))
        raise_error("precision '" + p + "': expected None, 'fp32', 'bf16' or 'fp16'");
      args.precision = parsed;
    }
    if (!plugin_dirs.is_none())
      for (const py::handle& d : plugin_dirs) args.plugin_dirs.push_back(path_text(d));
    std::optional<config::DeploymentConfig> file;
    if (!config.is_none()) {
      args.config = path_text(config);
      Result<config::DeploymentConfig> loaded = config::load_config_file(*args.config);
      if (!loaded.is_ok()) raise_error(loaded.status().message());
      file = std::move(*loaded);
    }
    if (!args.model && (!file || file->model.empty()))
      raise_error(
          file ? "no model: the deployment file " + file->source +
                     " has no 'model:' and no path was given"
               : "no model: give the model's path (or config= a deployment file with 'model:')");
    Result<cli::RunPlan> plan = cli::make_run_plan(args, file ? &*file : nullptr);
    if (!plan.is_ok()) raise_error(plan.status().message());
    model_path_ = plan->model_path;
    SessionOptions options = plan->session;
    for (std::string& dir : module_plugin_dirs()) options.plugin_dirs.push_back(std::move(dir));
    Result<std::unique_ptr<Session>> created = [&] {
      py::gil_scoped_release nogil;
      return Session::create(model_path_, options);
    }();
    if (!created.is_ok()) raise_error(created.status().message());
    session_ = std::move(*created);
    for (const TensorInfo& t : session_->inputs()) inputs_.push_back(ValueInfo::from(t));
    for (const TensorInfo& t : session_->outputs()) outputs_.push_back(ValueInfo::from(t));
  }

  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const std::string& model_path() const { return model_path_; }
  std::vector<std::string> backends() const { return session_->active_backends(); }
  Plan plan() const {
    return Plan{session_->plan().to_text(), cli::render_plan_json(session_->plan())};
  }

  // run(feeds) -> {name: array}
  py::dict run_dict(const py::dict& feeds) {
    std::vector<NamedTensor> out = run(feeds);
    py::dict result;
    for (NamedTensor& t : out) result[py::str(t.name)] = to_array(std::move(t.tensor), t.name);
    return result;
  }

  // run(output_names, feeds) -> [array], as ONNX Runtime spells it (None: every output).
  py::list run_list(const py::object& output_names, const py::dict& feeds) {
    std::vector<size_t> picked;
    if (output_names.is_none()) {
      for (size_t i = 0; i < outputs_.size(); ++i) picked.push_back(i);
    } else {
      if (py::isinstance<py::str>(output_names))
        raise_error("output_names: expected a list of names (or None), got the string '" +
                    output_names.cast<std::string>() + "'");
      for (const py::handle& n : output_names) {
        const std::string name = py::str(n).cast<std::string>();
        size_t i = 0;
        while (i < outputs_.size() && outputs_[i].name != name) ++i;
        if (i == outputs_.size())
          raise_error("unknown output '" + name +
                      "'; the model's outputs are: " + output_names_text());
        picked.push_back(i);
      }
    }
    std::vector<NamedTensor> out = run(feeds);
    py::list result;
    for (size_t i : picked) result.append(to_array(out[i].tensor, out[i].name));
    return result;
  }

 private:
  std::string output_names_text() const {
    std::vector<std::string> names;
    for (const ValueInfo& v : outputs_) names.push_back(v.name);
    return joined(names);
  }

  std::vector<NamedTensor> run(const py::dict& feeds) {
    std::vector<NamedTensor> inputs;
    inputs.reserve(inputs_.size());
    std::set<std::string> given;
    for (const auto& [key, value] : feeds) {
      if (!py::isinstance<py::str>(key))
        raise_error("feeds: keys must be input names (str), got " +
                    py::repr(key).cast<std::string>());
      const std::string name = key.cast<std::string>();
      const ValueInfo* info = nullptr;
      for (const ValueInfo& v : inputs_)
        if (v.name == name) info = &v;
      if (info == nullptr) {
        std::vector<std::string> names;
        for (const ValueInfo& v : inputs_) names.push_back(v.name);
        raise_error("unknown input '" + name + "'; the model's inputs are: " + joined(names));
      }
      given.insert(name);
      inputs.push_back({name, to_tensor(value, info->dtype, name)});
    }
    std::vector<std::string> missing;
    for (const TensorInfo& t : session_->inputs())
      if (!given.count(t.name))
        missing.push_back("'" + t.name + "' (" + std::string(dtype_name(t.dtype)) + " " +
                          t.shape_string() + ")");
    if (!missing.empty())
      raise_error("missing input" + std::string(missing.size() > 1 ? "s " : " ") + joined(missing));
    Result<std::vector<NamedTensor>> out = [&] {
      py::gil_scoped_release nogil;
      return session_->run(inputs);
    }();
    if (!out.is_ok()) raise_error(out.status().message());
    return std::move(*out);
  }

  std::shared_ptr<Session> session_;
  std::string model_path_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
};

py::list list_devices_py(const py::object& plugin_dirs) {
  std::vector<std::string> dirs;
  if (!plugin_dirs.is_none())
    for (const py::handle& d : plugin_dirs) dirs.push_back(path_text(d));
  for (std::string& dir : module_plugin_dirs()) dirs.push_back(std::move(dir));
  std::vector<BackendDevices> all;
  {
    py::gil_scoped_release nogil;
    all = list_devices(dirs);
  }
  py::list out;
  for (const BackendDevices& b : all) {
    py::list devices;
    for (const DeviceInfo& d : b.devices) {
      py::dict dev;
      dev["index"] = d.index;
      dev["name"] = d.name;
      dev["vendor"] = d.vendor;
      dev["kind"] = d.kind;
      dev["memory_bytes"] = d.memory_bytes;
      dev["compute_units"] = d.compute_units;
      dev["host_addressable"] = d.host_addressable;
      devices.append(std::move(dev));
    }
    py::dict entry;
    entry["backend"] = b.backend;
    entry["plugin_path"] = b.plugin_path;
    entry["version"] = b.version;
    entry["description"] = b.description;
    entry["devices"] = std::move(devices);
    entry["unavailable"] =
        b.unavailable.empty() ? py::object(py::none()) : py::object(py::str(b.unavailable));
    out.append(std::move(entry));
  }
  return out;
}

}  // namespace

void raise_error(const std::string& message) {
  PyErr_SetString(g_error, message.c_str());
  throw py::error_already_set();
}

}  // namespace infer::python

PYBIND11_MODULE(infer, m) {
  using namespace infer::python;
  m.doc() =
      "infer: load an ONNX model, optimize and partition it over backend plugins, run it.\n\n"
      "    import infer, numpy as np\n"
      "    s = infer.Session('model.onnx', backends=['cpu'])\n"
      "    outputs = s.run({'image': np.zeros((1, 1, 8, 8), np.float32)})\n";
  m.attr("__version__") = INFER_VERSION;
  g_error = PyErr_NewExceptionWithDoc(
      "infer.Error", "Raised for every failure, with the message infer-run would print.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(g_error);

  py::class_<Storage>(m, "_Storage",
                      "The tensor whose bytes an array uses (an output's .base, or what "
                      "_as_tensor made of an input).")
      .def_property_readonly(
          "address", [](const Storage& s) { return reinterpret_cast<uintptr_t>(s.tensor.data()); })
      .def_property_readonly("nbytes", [](const Storage& s) { return s.tensor.size_bytes(); })
      .def_property_readonly("borrowed", [](const Storage& s) { return s.tensor.borrowed(); });

  py::class_<ValueInfo>(m, "ValueInfo", "A model input or output as declared.")
      .def_readonly("name", &ValueInfo::name)
      .def_property_readonly("dtype", &ValueInfo::numpy_dtype_or_none,
                             "numpy dtype (None where numpy has none, e.g. bfloat16)")
      .def_property_readonly(
          "type", [](const ValueInfo& v) { return std::string(infer::dtype_name(v.dtype)); },
          "infer's dtype name: 'float32', 'bfloat16', ...")
      .def_readonly(
          "shape", &ValueInfo::shape,
          "dims: int, the symbol (str) of a symbolic dim, None when unknown; None for unknown rank")
      .def("__repr__", &ValueInfo::repr);

  py::class_<Plan>(m, "Plan", "Where each node runs and why: what infer-run --explain prints.")
      .def_readonly("text", &Plan::text)
      .def("to_dict", &Plan::to_dict, "The plan as infer-run --json reports it under 'plan'.")
      .def("__str__", [](const Plan& p) { return p.text; });

  py::class_<PySession>(m, "Session",
                        "A model loaded, optimized, partitioned and compiled, ready to run.\n\n"
                        "Session(path, backends=['cpu'], threads=0, optimization_level=3,\n"
                        "        precision=None, config=None, plugin_dirs=None)\n"
                        "config: a deployment YAML file; arguments given here win over its values.")
      .def(py::init<const py::object&, const py::object&, const py::object&, const py::object&,
                    const py::object&, const py::object&, const py::object&>(),
           py::arg("path") = py::none(), py::arg("backends") = py::none(),
           py::arg("threads") = py::none(), py::arg("optimization_level") = py::none(),
           py::arg("precision") = py::none(), py::arg("config") = py::none(),
           py::arg("plugin_dirs") = py::none())
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def("get_inputs", &PySession::inputs, "The inputs (ONNX Runtime's spelling).")
      .def("get_outputs", &PySession::outputs, "The outputs (ONNX Runtime's spelling).")
      .def_property_readonly("model_path", &PySession::model_path)
      .def_property_readonly("backends", &PySession::backends,
                             "Backends that received a partition.")
      .def_property_readonly("plan", &PySession::plan)
      .def("run", &PySession::run_dict, py::arg("feeds"),
           "run({name: array}) -> {output name: array}")
      .def("run", &PySession::run_list, py::arg("output_names"), py::arg("feeds"),
           "run(output_names, {name: array}) -> [array], outputs in the order asked (None: all)");

  m.def("list_devices", &list_devices_py, py::arg("plugin_dirs") = py::none(),
        "Every backend plugin found, with its devices or why it has none.");
  m.def(
      "_as_tensor",
      [](const py::handle& value, const std::string& dtype) {
        std::optional<infer::DataType> t = infer::dtype_from_name(dtype);
        if (!t) raise_error("_as_tensor: unknown dtype '" + dtype + "'");
        return Storage{to_tensor(value, *t, "value")};
      },
      py::arg("value"), py::arg("dtype"),
      "What run does with one feed of the given dtype: the tensor it passes on (its "
      "address shows whether the array was read in place).");
}
