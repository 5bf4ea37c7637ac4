// See model_check.hpp.
#include "onnx/model_check.hpp"

#include <onnx/checker.h>

#include <algorithm>
#include <exception>
#include <string>
#include <unordered_map>

#include "onnx/schema_policy.hpp"

namespace infer::onnx_io {
namespace {

// The checker's messages may span lines and end with a "==> Context:" section that
// repeats the node; infer names the node itself, so it keeps the first part on one line.
std::string one_line(const std::string& message) {
  std::string text = message.substr(0, message.find("==> Context:"));
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && (text.back() == ' ' || text.back() == '.')) text.pop_back();
  std::string out;
  for (char c : text)
    if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
  return out;
}

class Checker {
 public:
  Checker(const onnx::ModelProto& model, const NodeNames& names, const std::string& base_dir)
      : names_(names) {
    // ONNX joins the folder and the location by plain concatenation.
    if (!base_dir.empty()) ctx_.set_model_dir(base_dir + "/");
    // Versions newer than the release's IR are checked as the newest it knows.
    ctx_.set_ir_version(
        static_cast<int>(std::min<int64_t>(model.ir_version(), onnx::Version::IR_VERSION)));
    std::unordered_map<std::string, int> imports;
    for (const auto& op : model.opset_import()) {
      imports[op.domain()] = static_cast<int>(op.version());
      versions_[op.domain() == "ai.onnx" ? std::string() : op.domain()] = op.version();
    }
    // "ai.onnx" and "" are one domain; a node may use either spelling.
    if (imports.count("") && !imports.count("ai.onnx")) imports["ai.onnx"] = imports[""];
    if (imports.count("ai.onnx") && !imports.count("")) imports[""] = imports["ai.onnx"];
    ctx_.set_opset_imports(std::move(imports));
  }

  Status check_graph(const onnx::GraphProto& graph, const onnx::checker::CheckerContext& ctx) {
    for (const auto& tensor : graph.initializer()) {
      // External data is resolved and confined by the converter; dtypes newer than the
      // release (float8, int4) would be refused as unknown, so the converter checks them.
      const bool external =
          tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL;
      if (external || tensor.data_type() > onnx::TensorProto::BFLOAT16) continue;
      try {
        onnx::checker::check_tensor(tensor, ctx);
      } catch (const std::exception& e) {
        return invalid_argument("initializer '" + tensor.name() +
                                "': ONNX checker: " + one_line(e.what()));
      }
    }
    for (const auto& node : graph.node()) INFER_RETURN_IF_ERROR(check_node(node, ctx));
    return Status::ok();
  }

  const onnx::checker::CheckerContext& root() const { return ctx_; }

 private:
  Status check_node(const onnx::NodeProto& node, const onnx::checker::CheckerContext& ctx) {
    const std::string where = names_.describe(node);
    onnx::checker::CheckerContext body_ctx(ctx);
    body_ctx.set_is_main_graph(false);
    const onnx::checker::LexicalScopeContext lex;
    try {
      auto version = versions_.find(node.domain() == "ai.onnx" ? std::string() : node.domain());
      const bool schema_unknowable =
          version != versions_.end() && opset_is_newer_than_known(version->first, version->second);
      const bool has_bodies = std::any_of(
          node.attribute().begin(), node.attribute().end(),
          [](const onnx::AttributeProto& a) { return a.has_g() || a.graphs_size() > 0; });
      if (schema_unknowable) {
        if (node.op_type().empty()) return invalid_argument(where + ": op_type is empty");
        for (const auto& attr : node.attribute())
          if (!attr.has_g() && attr.graphs_size() == 0)
            onnx::checker::check_attribute(attr, ctx, lex);
      } else if (!has_bodies) {
        onnx::checker::check_node(node, ctx, lex);
      } else {
        // check_node would check the bodies with ONNX's own graph checker (which insists
        // on sorted nodes and knows no opset policy). It gets a copy whose bodies are
        // empty stand-ins, enough for the schema's attribute checks; the bodies are
        // checked below by this class.
        onnx::NodeProto shallow;
        shallow.set_name(node.name());
        shallow.set_op_type(node.op_type());
        shallow.set_domain(node.domain());
        *shallow.mutable_input() = node.input();
        *shallow.mutable_output() = node.output();
        for (const auto& attr : node.attribute()) {
          onnx::AttributeProto* copy = shallow.add_attribute();
          if (!attr.has_g() && attr.graphs_size() == 0) {
            *copy = attr;
            continue;
          }
          copy->set_name(attr.name());
          copy->set_type(attr.type());
          if (attr.has_g()) stub(attr.g(), *copy->mutable_g());
          for (const auto& g : attr.graphs()) stub(g, *copy->add_graphs());
        }
        onnx::checker::check_node(shallow, ctx, lex);
      }
    } catch (const std::exception& e) {
      return invalid_argument(where + ": ONNX checker: " + one_line(e.what()));
    }
    for (const auto& attr : node.attribute()) {
      if (attr.has_g())
        INFER_RETURN_IF_ERROR(check_graph(attr.g(), body_ctx)
                                  .with_context(where + ": attribute '" + attr.name() + "'"));
      for (const auto& g : attr.graphs())
        INFER_RETURN_IF_ERROR(
            check_graph(g, body_ctx).with_context(where + ": attribute '" + attr.name() + "'"));
    }
    return Status::ok();
  }

  // An empty graph carrying only the name ONNX's graph checker requires.
  static void stub(const onnx::GraphProto& body, onnx::GraphProto& out) {
    out.set_name(body.name().empty() ? std::string("body") : body.name());
  }

  const NodeNames& names_;
  onnx::checker::CheckerContext ctx_;
  std::unordered_map<std::string, int64_t> versions_;
};

}  // namespace

Status check_model(const onnx::ModelProto& model, const NodeNames& names,
                   const std::string& base_dir) {
  Checker checker(model, names, base_dir);
  return checker.check_graph(model.graph(), checker.root());
}

}  // namespace infer::onnx_io
