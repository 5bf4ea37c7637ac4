// See shape_infer.hpp.
#include "onnx/shape_infer.hpp"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <exception>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "infer/printable.hpp"
#include "onnx/schema_policy.hpp"

namespace infer::onnx_io {
namespace {

using SymbolSet = std::unordered_set<std::string>;

// Calls `visit` on every declared or inferred TypeProto of `graph` and of its bodies.
template <typename Graph, typename Visit>
void for_each_type(Graph& graph, const Visit& visit) {
  auto each = [&](auto& infos) {
    for (auto& vi : infos)
      if (vi.has_type()) visit(vi.name(), *vi.mutable_type());
  };
  each(*graph.mutable_input());
  each(*graph.mutable_output());
  each(*graph.mutable_value_info());
  for (auto& node : *graph.mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_type(*attr.mutable_g(), visit);
      for (auto& body : *attr.mutable_graphs()) for_each_type(body, visit);
    }
}

void collect_symbols(onnx::ModelProto& model, SymbolSet& symbols) {
  for_each_type(*model.mutable_graph(), [&](const std::string&, onnx::TypeProto& type) {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
    for (const auto& d : type.tensor_type().shape().dim())
      if (d.has_dim_param()) symbols.insert(d.dim_param());
  });
}

// ONNX names every dim it cannot size with a fresh symbol ("unk__0", "unk__1"...).
// Those names mean "unknown": no input binds them and users never wrote them, so they
// are cleared, leaving the dims unknown. Symbols the file itself used are kept, even if
// they happen to look alike (a model saved after an earlier shape inference).
void forget_invented_symbols(onnx::ModelProto& model, const SymbolSet& original) {
  for_each_type(*model.mutable_graph(), [&](const std::string&, onnx::TypeProto& type) {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return;
    for (auto& d : *type.mutable_tensor_type()->mutable_shape()->mutable_dim())
      if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) == 0 &&
          !original.count(d.dim_param()))
        d.clear_dim_param();
  });
}

// Attributes that ONNX's shape inference (1.12) divides by or sizes loops with, per
// operator of the default domain: a zero there is an integer division by zero inside
// libonnx, which kills the process with SIGFPE (tests/fuzz found a Conv with strides
// [1,0]). The ONNX specification requires them positive, so such a node is refused,
// named, before ONNX sees it.
struct PositiveAttributes {
  const char* op_type;
  std::initializer_list<const char*> names;
};
const PositiveAttributes kPositiveAttributes[] = {
    {"Conv", {"strides", "dilations", "kernel_shape", "group"}},
    {"ConvInteger", {"strides", "dilations", "kernel_shape", "group"}},
    {"QLinearConv", {"strides", "dilations", "kernel_shape", "group"}},
    {"ConvTranspose", {"strides", "dilations", "kernel_shape", "group"}},
    {"MaxPool", {"strides", "dilations", "kernel_shape"}},
    {"AveragePool", {"strides", "dilations", "kernel_shape"}},
    {"LpPool", {"strides", "dilations", "kernel_shape"}},
    {"MaxUnpool", {"strides", "kernel_shape"}},
    {"Col2Im", {"strides", "dilations"}},
    {"DepthToSpace", {"blocksize"}},
    {"SpaceToDepth", {"blocksize"}},
};

std::string ints_text(const onnx::AttributeProto& attr) {
  if (attr.type() == onnx::AttributeProto::INT) return std::to_string(attr.i());
  std::string text = "[";
  for (int i = 0; i < attr.ints_size(); ++i) text += (i ? "," : "") + std::to_string(attr.ints(i));
  return text + "]";
}

Status check_inference_preconditions(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) INFER_RETURN_IF_ERROR(check_inference_preconditions(attr.g()));
      for (const auto& body : attr.graphs())
        INFER_RETURN_IF_ERROR(check_inference_preconditions(body));
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    for (const PositiveAttributes& rule : kPositiveAttributes) {
      if (node.op_type() != rule.op_type) continue;
      for (const auto& attr : node.attribute()) {
        if (std::find_if(rule.names.begin(), rule.names.end(),
                         [&](const char* n) { return attr.name() == n; }) == rule.names.end())
          continue;
        const bool bad = attr.type() == onnx::AttributeProto::INT
                             ? attr.i() < 1
                             : std::any_of(attr.ints().begin(), attr.ints().end(),
                                           [](int64_t v) { return v < 1; });
        if (bad) {
          return invalid_argument("node '" + printable(node.name()) + "' (" + node.op_type() +
                                  "): attribute '" + attr.name() +
                                  "' must hold integers >= 1, got " + ints_text(attr));
        }
      }
    }
  }
  return Status::ok();
}

// ONNX's (1.12) shape inference of the convolutions takes the kernel's spatial dims from
// W when there is no kernel_shape attribute, then indexes per-dimension vectors sized by
// X's rank with them: an X of lower rank than W (tests/fuzz found a [1, 1] input) reads
// past a vector and crashes libonnx. While it runs, each such node either gets
// kernel_shape spelled out from W's dims when W is an initializer or the DequantizeLinear
// of one (the same meaning, and
// ONNX then compares the sizes and reports a mismatch as an error), or, when W's shape is
// known only at run time, is hidden from ONNX (its outputs stay as the file declares
// them). restore() undoes both.
class ConvInferenceGuard {
 public:
  explicit ConvInferenceGuard(onnx::ModelProto& model) : model_(model) {
    guard(*model.mutable_graph(), {});
    if (hidden_.empty()) return;
    // ONNX refuses a domain the model does not import; with no schema in it, the nodes are
    // skipped.
    auto* import = model.add_opset_import();
    import->set_domain(kSkippedDomain);
    import->set_version(1);
    imported_ = true;
  }
  ConvInferenceGuard(const ConvInferenceGuard&) = delete;
  ConvInferenceGuard& operator=(const ConvInferenceGuard&) = delete;
  ~ConvInferenceGuard() { restore(); }

  void restore() {
    for (onnx::NodeProto* node : spelled_out_) {
      auto* attrs = node->mutable_attribute();
      for (int i = attrs->size(); i-- > 0;)
        if (attrs->Get(i).name() == "kernel_shape") attrs->DeleteSubrange(i, 1);
    }
    for (auto& [node, domain] : hidden_) node->set_domain(domain);
    if (imported_) {
      auto* imports = model_.mutable_opset_import();
      for (int i = imports->size(); i-- > 0;)
        if (imports->Get(i).domain() == kSkippedDomain) imports->DeleteSubrange(i, 1);
    }
    spelled_out_.clear();
    hidden_.clear();
    imported_ = false;
  }

 private:
  using Dims = std::unordered_map<std::string, std::vector<int64_t>>;

  // `initializers`: the values whose dims are known before inference: initializers, and
  // the outputs of a DequantizeLinear of one (the weights of a QDQ model), which keep
  // their input's shape.
  void guard(onnx::GraphProto& graph, Dims initializers) {
    for (const auto& t : graph.initializer())
      initializers[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
    for (const auto& node : graph.node()) {
      if ((!node.domain().empty() && node.domain() != "ai.onnx") ||
          node.op_type() != "DequantizeLinear" || node.input_size() < 1 || node.output_size() < 1)
        continue;
      const auto it = initializers.find(node.input(0));
      if (it != initializers.end()) initializers[node.output(0)] = it->second;
    }
    for (auto& node : *graph.mutable_node()) {
      for (auto& attr : *node.mutable_attribute()) {
        if (attr.has_g()) guard(*attr.mutable_g(), initializers);
        for (auto& body : *attr.mutable_graphs()) guard(body, initializers);
      }
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      int w = -1;
      if (node.op_type() == "Conv" || node.op_type() == "ConvInteger" ||
          node.op_type() == "ConvTranspose")
        w = 1;
      else if (node.op_type() == "QLinearConv")
        w = 3;
      if (w < 0 ||
          std::any_of(node.attribute().begin(), node.attribute().end(),
                      [](const onnx::AttributeProto& a) { return a.name() == "kernel_shape"; }))
        continue;
      auto it = w < node.input_size() ? initializers.find(node.input(w)) : initializers.end();
      if (it != initializers.end() && it->second.size() >= 3) {
        auto* attr = node.add_attribute();
        attr->set_name("kernel_shape");
        attr->set_type(onnx::AttributeProto::INTS);
        for (size_t d = 2; d < it->second.size(); ++d) attr->add_ints(it->second[d]);
        spelled_out_.push_back(&node);
      } else {
        hidden_.emplace_back(&node, node.domain());
        node.set_domain(kSkippedDomain);
      }
    }
  }

  static constexpr const char* kSkippedDomain = "ai.infer.shape_inference_skipped";
  onnx::ModelProto& model_;
  std::vector<onnx::NodeProto*> spelled_out_;
  std::vector<std::pair<onnx::NodeProto*, std::string>> hidden_;
  bool imported_ = false;
};

}  // namespace

Status infer_shapes(onnx::ModelProto& model) {
  INFER_RETURN_IF_ERROR(check_inference_preconditions(model.graph()));
  const BoundedSchemaRegistry registry;
  // check_type off: type mismatches are the checker's and the backends' business.
  // error_mode 0: a node ONNX cannot infer keeps whatever the file says about it.
  const onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                            /*data_prop_val=*/true);
  SymbolSet original;
  collect_symbols(model, original);
  ConvInferenceGuard guard(model);
  try {
    onnx::shape_inference::InferShapes(model, &registry, options);
  } catch (const std::exception& e) {
    std::string message = e.what();
    std::replace(message.begin(), message.end(), '\n', ' ');
    return invalid_argument("ONNX shape inference failed: " + message);
  }
  guard.restore();
  forget_invented_symbols(model, original);
  return Status::ok();
}

}  // namespace infer::onnx_io
