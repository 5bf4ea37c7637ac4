// See model_loader.hpp: reading the file, the model-level checks, and the order of the
// stages.
#include "onnx/model_loader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <utility>

#include <onnx/onnx_pb.h>

#include "onnx/external_data.hpp"
#include "onnx/graph_convert.hpp"
#include "onnx/model_check.hpp"
#include "onnx/node_names.hpp"
#include "onnx/quant_annotate.hpp"
#include "onnx/shape_infer.hpp"

namespace infer::onnx_io {
namespace {

std::string quoted(const std::string& name) { return "'" + name + "'"; }

// Collects opset_import into `opsets` ("ai.onnx" filed under ""), checking it.
Status read_opsets(const onnx::ModelProto& proto, std::map<std::string, int64_t>& opsets) {
  for (const auto& op : proto.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? std::string() : op.domain();
    if (op.version() < 1)
      return invalid_argument("opset_import gives domain '" + domain + "' version " +
                              std::to_string(op.version()) + ", expected 1 or more");
    if (!opsets.emplace(domain, op.version()).second)
      return invalid_argument("opset_import lists domain '" + domain + "' twice");
  }
  // IR versions before 3 had no opset_import: such files are implicitly ONNX opset 1.
  // Every opset version loads: whether a node's version is runnable is the backends'
  // answer (a kernel covers a range of versions), so an old model that only uses ops
  // whose semantics did not change still runs, and the others are named node by node.
  if (!opsets.count("") && proto.ir_version() < 3) opsets[""] = 1;
  return Status::ok();
}

// Every node's domain must be imported, or nothing says which operator version it is.
// Checked before ONNX's checker and shape inference so that the message is the same with
// or without them (shape inference would otherwise fail first, less clearly).
Status check_domains(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets,
                     const NodeNames& names) {
  for (const auto& node : graph.node()) {
    const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
    if (!opsets.count(domain))
      return invalid_argument(names.describe(node) + ": its domain '" + domain +
                              "' is not imported by the model (opset_import)");
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) INFER_RETURN_IF_ERROR(check_domains(attr.g(), opsets, names));
      for (const auto& body : attr.graphs())
        INFER_RETURN_IF_ERROR(check_domains(body, opsets, names));
    }
  }
  return Status::ok();
}

Result<ir::Model> convert_model(onnx::ModelProto& proto, const std::string& name,
                                const std::string& base_dir, const LoadOptions& options) {
  const std::string where = "model " + quoted(name);
  if (!proto.has_graph())
    return invalid_argument(quoted(name) + " is not a valid ONNX model (it has no graph)");
  if (proto.ir_version() < 1)
    return invalid_argument(quoted(name) + " is not a valid ONNX model (ir_version is not set)");

  ir::Model model;
  model.ir_version = proto.ir_version();
  model.producer_name = proto.producer_name();
  model.producer_version = proto.producer_version();
  model.source_path = name;
  INFER_RETURN_IF_ERROR(read_opsets(proto, model.opsets).with_context(where));
  // Make the implied opset 1 of an IR-2 file explicit, so that ONNX's checker and shape
  // inference (which look only at opset_import) see the same version as infer does.
  if (proto.opset_import_size() == 0 && model.opsets.count("")) {
    auto* import = proto.add_opset_import();
    import->set_domain("");
    import->set_version(model.opsets.at(""));
  }

  const NodeNames names(proto.graph());
  INFER_RETURN_IF_ERROR(check_domains(proto.graph(), model.opsets, names).with_context(where));
  if (options.run_checker)
    INFER_RETURN_IF_ERROR(check_model(proto, names, base_dir).with_context(where));
  if (options.run_shape_inference) INFER_RETURN_IF_ERROR(infer_shapes(proto).with_context(where));

  ExternalData external(base_dir);
  ConvertContext ctx;
  ctx.opsets = &model.opsets;
  ctx.external = &external;
  ctx.names = &names;
  for (const auto& f : proto.functions()) ctx.local_functions.emplace(f.domain(), f.name());
  auto graph = convert_main_graph(*proto.mutable_graph(), ctx);
  if (!graph.is_ok()) return graph.status().with_context(where);
  model.graph = std::move(graph).value();
  annotate_quantization(*model.graph);
  // The converter builds the invariants validate() checks; a failure here means input
  // the converter let through, so it is still reported as the model's fault, by name.
  INFER_RETURN_IF_ERROR(model.graph->validate().with_context(where));
  return model;
}

Result<ir::Model> load_bytes(const void* data, size_t size, const std::string& name,
                             const std::string& base_dir, const LoadOptions& options) {
  if (size == 0)
    return invalid_argument(quoted(name) + " is not a valid ONNX model (the file is empty)");
  if (size > static_cast<size_t>(INT_MAX))
    return invalid_argument(quoted(name) +
                            " is larger than 2 GiB, more than protobuf can parse; store the "
                            "weights as external data");
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    return invalid_argument(quoted(name) + " is not a valid ONNX model (protobuf parse failed)");
  return convert_model(proto, name, base_dir, options);
}

// Runs `load` and turns anything thrown (by protobuf, onnx or the allocator) into a
// Status, since no exception may leave the loader.
template <typename F>
Result<ir::Model> guarded(const std::string& name, F&& load) {
  try {
    return load();
  } catch (const std::bad_alloc&) {
    return unavailable("model " + quoted(name) + ": out of memory while loading");
  } catch (const std::exception& e) {
    return internal_error("model " + quoted(name) +
                          ": unexpected error while loading: " + e.what());
  } catch (...) {
    return internal_error("model " + quoted(name) + ": unexpected error while loading");
  }
}

// A read-only mapping of a whole file, unmapped when it goes out of scope.
class MappedModelFile {
 public:
  ~MappedModelFile() {
    if (data_) munmap(data_, size_);
  }
  Status open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      return Status(
          err == ENOENT || err == ENOTDIR ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
          "cannot open model " + quoted(path) + ": " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const bool dir = S_ISDIR(st.st_mode);
      ::close(fd);
      return invalid_argument("cannot open model " + quoted(path) + ": " +
                              (dir ? std::strerror(EISDIR) : "not a regular file"));
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        size_ = 0;
        return unavailable("cannot read model " + quoted(path) + ": " + std::strerror(err));
      }
      data_ = p;
    }
    ::close(fd);
    return Status::ok();
  }
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

Result<ir::Model> load_model(const std::string& path, const LoadOptions& options) {
  return guarded(path, [&]() -> Result<ir::Model> {
    MappedModelFile file;
    INFER_RETURN_IF_ERROR(file.open(path));
    std::string base_dir = std::filesystem::path(path).parent_path().string();
    if (base_dir.empty()) base_dir = ".";
    return load_bytes(file.data(), file.size(), path, base_dir, options);
  });
}

Result<ir::Model> load_model_from_memory(const void* data, size_t size,
                                         const std::string& name_for_messages,
                                         const std::string& base_dir, const LoadOptions& options) {
  return guarded(name_for_messages, [&]() -> Result<ir::Model> {
    if (data == nullptr && size != 0)
      return invalid_argument(quoted(name_for_messages) + ": no data (null pointer)");
    return load_bytes(data, size, name_for_messages, base_dir, options);
  });
}

}  // namespace infer::onnx_io
