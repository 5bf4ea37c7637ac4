// The graph's value and node tables and the links between them (see graph.hpp). The
// ordering and checking algorithms live in graph_order.cpp.
#include "ir/graph.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace infer::ir {

ValueId Graph::add_value(Value v) {
  const auto id = static_cast<ValueId>(values_.size());
  // The first value keeps a name: a duplicate is a caller bug that validate() reports,
  // and answering lookups with the older value keeps earlier ids stable meanwhile.
  if (!v.name.empty()) by_name_.emplace(v.name, id);
  values_.push_back(std::move(v));
  return id;
}

std::optional<ValueId> Graph::find_value(const std::string& value_name) const {
  auto it = by_name_.find(value_name);
  if (it != by_name_.end() && it->second < values_.size() && values_[it->second].name == value_name)
    return it->second;
  // The index is stale when a name was assigned directly: a linear scan still finds the
  // right value (it only costs time, and only in that case).
  if (it != by_name_.end()) {
    for (ValueId id = 0; id < values_.size(); ++id)
      if (values_[id].name == value_name) return id;
  }
  return std::nullopt;
}

void Graph::rename_value(ValueId id, std::string new_name) {
  Value& v = values_.at(id);
  auto it = by_name_.find(v.name);
  if (it != by_name_.end() && it->second == id) by_name_.erase(it);
  v.name = std::move(new_name);
  if (!v.name.empty()) by_name_.emplace(v.name, id);
}

NodeId Graph::add_node(Node n) {
  const auto id = static_cast<NodeId>(nodes_.size());
  for (ValueId out : n.outputs)
    if (out != kNoValue && out < values_.size()) values_[out].producer = id;
  nodes_.push_back(std::move(n));
  return id;
}

void Graph::rebuild_links() {
  by_name_.clear();
  for (ValueId id = 0; id < values_.size(); ++id) {
    values_[id].producer = kNoNode;
    if (!values_[id].name.empty()) by_name_.emplace(values_[id].name, id);
  }
  for (NodeId n = 0; n < nodes_.size(); ++n)
    for (ValueId out : nodes_[n].outputs)
      if (out != kNoValue && out < values_.size()) values_[out].producer = n;
}

std::vector<std::string> Graph::free_names() const {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const Value& v : values_)
    if (v.outer_scope && seen.insert(v.name).second) names.push_back(v.name);
  for (const Node& node : nodes_) {
    for (const Attribute& attr : node.attributes) {
      for (const auto& sub : attr.graphs) {
        if (!sub) continue;
        for (std::string& name : sub->free_names()) {
          // A name this graph defines is resolved here; one it only captures was listed
          // above, and one it neither defines nor declares comes from further out.
          if (seen.count(name) != 0 || find_value(name)) continue;
          seen.insert(name);
          names.push_back(std::move(name));
        }
      }
    }
  }
  return names;
}

std::vector<ValueId> Graph::implicit_inputs(NodeId id) const {
  std::vector<ValueId> out;
  for (const Attribute& attr : nodes_.at(id).attributes) {
    for (const auto& sub : attr.graphs) {
      if (!sub) continue;
      for (const std::string& name : sub->free_names()) {
        auto found = find_value(name);
        if (found && std::find(out.begin(), out.end(), *found) == out.end()) out.push_back(*found);
      }
    }
  }
  return out;
}

std::vector<std::vector<ValueId>> Graph::all_implicit_inputs() const {
  std::vector<std::vector<ValueId>> result(nodes_.size());
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    bool has_graph = false;
    for (const Attribute& attr : nodes_[n].attributes)
      has_graph = has_graph || !attr.graphs.empty();
    if (has_graph) result[n] = implicit_inputs(n);
  }
  return result;
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  return consumers(all_implicit_inputs());
}

std::vector<std::vector<NodeId>> Graph::consumers(
    const std::vector<std::vector<ValueId>>& implicit) const {
  std::vector<std::vector<NodeId>> result(values_.size());
  auto add = [&](ValueId v, NodeId n) {
    if (v == kNoValue || v >= result.size()) return;
    auto& list = result[v];
    // A node reading the same value twice (Mul(x, x)) is one consumer; nodes are visited
    // in order, so a duplicate can only be the last entry.
    if (list.empty() || list.back() != n) list.push_back(n);
  };
  for (NodeId n = 0; n < nodes_.size(); ++n) {
    for (ValueId in : nodes_[n].inputs) add(in, n);
    if (n < implicit.size())
      for (ValueId in : implicit[n]) add(in, n);
  }
  return result;
}

void Graph::erase_nodes(const std::vector<bool>& remove) {
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  for (NodeId n = 0; n < nodes_.size(); ++n)
    if (n >= remove.size() || !remove[n]) kept.push_back(std::move(nodes_[n]));
  nodes_ = std::move(kept);
  rebuild_links();
}

int64_t Model::opset(const std::string& domain) const {
  // "ai.onnx" is an alias of the default domain in ONNX.
  const std::string key = domain == "ai.onnx" ? std::string() : domain;
  auto it = opsets.find(key);
  if (it != opsets.end()) return it->second;
  if (key.empty()) {
    auto alias = opsets.find("ai.onnx");
    if (alias != opsets.end()) return alias->second;
  }
  return 0;
}

}  // namespace infer::ir
