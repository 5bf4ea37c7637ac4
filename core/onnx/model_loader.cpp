// See model_loader.hpp: reading the file, the model-level checks, and the order of the
// stages.
#include "onnx/model_loader.hpp"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
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

#include "onnx/contrib_quant.hpp"
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

  // ONNX Runtime's QOperator contrib ops, in the QDQ form they stand for, before the
  // checker, shape inference and the node names see the graph.
  INFER_RETURN_IF_ERROR(
      expand_contrib_quant_ops(*proto.mutable_graph(),
                               model.opsets.count("") ? model.opsets.at("") : int64_t{1})
          .with_context(where));
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

Status check_size(size_t size, const std::string& name) {
  if (size == 0)
    return invalid_argument(quoted(name) + " is not a valid ONNX model (the file is empty)");
  if (size > static_cast<size_t>(INT_MAX))
    return invalid_argument(quoted(name) +
                            " is larger than 2 GiB, more than protobuf can parse; store the "
                            "weights as external data");
  return Status::ok();
}

Status parse_failed(const std::string& name) {
  return invalid_argument(quoted(name) + " is not a valid ONNX model (protobuf parse failed)");
}

Result<ir::Model> load_bytes(const void* data, size_t size, const std::string& name,
                             const std::string& base_dir, const LoadOptions& options) {
  INFER_RETURN_IF_ERROR(check_size(size, name));
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return parse_failed(name);
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

// An open model file. It is parsed as a stream (64 KiB reads) rather than mapped: a
// mapping keeps every page of the file resident while protobuf copies the weights out
// of it, so the process would briefly hold the weights twice (ResNet-50: 213 MB peak
// for 102 MB of weights, instead of ~115 MB).
class ModelFile {
 public:
  ~ModelFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int err = errno;
      return Status(
          err == ENOENT || err == ENOTDIR ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
          "cannot open model " + quoted(path) + ": " + std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      const bool dir = S_ISDIR(st.st_mode);
      return invalid_argument("cannot open model " + quoted(path) + ": " +
                              (dir ? std::strerror(EISDIR) : "not a regular file"));
    }
    size_ = static_cast<size_t>(st.st_size);
    return Status::ok();
  }
  int fd() const { return fd_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  size_t size_ = 0;
};

}  // namespace

Result<ir::Model> load_model(const std::string& path, const LoadOptions& options) {
  return guarded(path, [&]() -> Result<ir::Model> {
    ModelFile file;
    INFER_RETURN_IF_ERROR(file.open(path));
    INFER_RETURN_IF_ERROR(check_size(file.size(), path));
    std::string base_dir = std::filesystem::path(path).parent_path().string();
    if (base_dir.empty()) base_dir = ".";
    onnx::ModelProto proto;
    google::protobuf::io::FileInputStream stream(file.fd(), 1 << 16);
    if (!proto.ParseFromZeroCopyStream(&stream)) {
      if (stream.GetErrno() != 0)
        return unavailable("cannot read model " + quoted(path) + ": " +
                           std::strerror(stream.GetErrno()));
      return parse_failed(path);
    }
    return convert_model(proto, path, base_dir, options);
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
