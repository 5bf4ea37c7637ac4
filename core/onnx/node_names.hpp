// Names for every node of a model, so that each message can name the node it is about.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include <onnx/onnx_pb.h>

namespace infer::onnx_io {

// Named nodes keep their names (even duplicates: renaming what the user wrote would make
// messages harder to match with the file). An unnamed node gets "<OpType>_<index in its
// graph>", prefixed inside a body with the path of the node that holds it
// ("If_3/then_branch/Add_0"), and suffixed if that name is taken, so generated names
// never collide with any other node's name in the model.
class NodeNames {
 public:
  // Names every node of `graph` and of its bodies, recursively. The nodes must not be
  // added or removed afterwards (names are keyed by the NodeProto's address).
  explicit NodeNames(const onnx::GraphProto& graph);

  const std::string& of(const onnx::NodeProto& node) const;
  // "node 'conv1' (Conv)" or, with a custom domain, "node 'g' (com.acme:Gelu)".
  std::string describe(const onnx::NodeProto& node) const;

 private:
  void reserve(const onnx::GraphProto& graph);
  void assign(const onnx::GraphProto& graph, const std::string& prefix);

  std::unordered_set<std::string> taken_;
  std::unordered_map<const onnx::NodeProto*, std::string> names_;
};

}  // namespace infer::onnx_io
