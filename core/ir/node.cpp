// Attribute accessors and the naming of nodes in messages (see graph.hpp).
#include <string>

#include "infer/printable.hpp"
#include "ir/graph.hpp"

namespace infer::ir {

const Attribute* Node::attr(const std::string& attr_name) const {
  for (const Attribute& a : attributes)
    if (a.name == attr_name) return &a;
  return nullptr;
}

// The typed accessors answer `fallback` both when the attribute is absent and when it has
// another type: a schema-valid model never mixes them up, and callers that must tell the
// cases apart inspect attr() themselves.
int64_t Node::attr_int(const std::string& attr_name, int64_t fallback) const {
  const Attribute* a = attr(attr_name);
  return a && a->type == AttrType::kInt ? a->i : fallback;
}

double Node::attr_float(const std::string& attr_name, double fallback) const {
  const Attribute* a = attr(attr_name);
  return a && a->type == AttrType::kFloat ? a->f : fallback;
}

std::string Node::attr_string(const std::string& attr_name, const std::string& fallback) const {
  const Attribute* a = attr(attr_name);
  return a && a->type == AttrType::kString ? a->s : fallback;
}

std::string Node::describe() const {
  // A custom domain is part of the operator's identity ("com.acme:Gelu" is not ONNX's
  // Gelu), so it is shown; the default domain is implied.
  std::string op = domain.empty() || domain == "ai.onnx" ? op_type : domain + ":" + op_type;
  // Names come from model files: escaped, so a message never carries raw bytes.
  return "node '" + printable(name) + "' (" + printable(op) + ")";
}

}  // namespace infer::ir
