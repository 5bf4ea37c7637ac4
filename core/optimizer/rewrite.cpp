#include "optimizer/rewrite.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <set>

namespace infer::optimizer {
namespace {

// IEEE half and bfloat16 bit patterns to float (constants only: no speed needed).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < 6.103515625e-05f) {  // subnormal half: round to a multiple of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f)));
  }
  // Round the 23-bit mantissa to 10 bits, to nearest even.
  uint32_t bits = std::bit_cast<uint32_t>(a);
  const uint32_t rounding = 0xfffu + ((bits >> 13) & 1u);
  bits += rounding;
  const uint32_t exp = (bits >> 23) - 112;
  return static_cast<uint16_t>(sign | (exp << 10) | ((bits >> 13) & 0x3ffu));
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace

GraphIndex::GraphIndex(const ir::Graph& graph)
    : graph_(graph),
      is_output_(graph.value_count(), false),
      captured_(graph.value_count(), false),
      use_slots_(graph.value_count(), 0) {
  // Captures are found by walking every subgraph: once, for the consumers and the flags.
  const std::vector<std::vector<ir::ValueId>> implicit = graph.all_implicit_inputs();
  consumers_ = graph.consumers(implicit);
  for (ir::ValueId v : graph.outputs)
    if (v < is_output_.size()) is_output_[v] = true;
  for (const ir::Node& node : graph.nodes())
    for (ir::ValueId v : node.inputs)
      if (v != ir::kNoValue && v < use_slots_.size()) ++use_slots_[v];
  for (const std::vector<ir::ValueId>& captures : implicit)
    for (ir::ValueId v : captures)
      if (v < captured_.size()) captured_[v] = true;
  consumers_.resize(graph.value_count());
}

const std::vector<ir::NodeId>& GraphIndex::consumers(ir::ValueId v) const {
  static const std::vector<ir::NodeId> kNone;
  return v < consumers_.size() ? consumers_[v] : kNone;
}

bool GraphIndex::is_graph_output(ir::ValueId v) const {
  return v < is_output_.size() && is_output_[v];
}

bool GraphIndex::is_captured(ir::ValueId v) const { return v < captured_.size() && captured_[v]; }

bool GraphIndex::has_single_use(ir::ValueId v) const {
  return v < use_slots_.size() && use_slots_[v] == 1 && consumers(v).size() == 1 &&
         !is_graph_output(v) && !is_captured(v);
}

const ir::Node* GraphIndex::producer(ir::ValueId v) const {
  const ir::NodeId id = producer_id(v);
  return id == ir::kNoNode ? nullptr : &graph_.node(id);
}

ir::NodeId GraphIndex::producer_id(ir::ValueId v) const {
  if (v == ir::kNoValue || v >= graph_.value_count()) return ir::kNoNode;
  const ir::NodeId id = graph_.value(v).producer;
  return id < graph_.node_count() ? id : ir::kNoNode;
}

const ir::TensorData* constant_of(const ir::Graph& graph, ir::ValueId v) {
  if (v == ir::kNoValue || v >= graph.value_count()) return nullptr;
  return graph.value(v).constant.get();
}

std::optional<std::vector<double>> float_constant(const ir::Graph& graph, ir::ValueId v) {
  const ir::TensorData* t = constant_of(graph, v);
  if (t == nullptr) return std::nullopt;
  const int64_t n = t->element_count();
  std::vector<double> out(static_cast<size_t>(n));
  switch (t->dtype()) {
    case DataType::kFloat32:
      for (int64_t i = 0; i < n; ++i) out[i] = t->as<float>()[i];
      break;
    case DataType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out[i] = t->as<double>()[i];
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) out[i] = half_to_float(t->as<uint16_t>()[i]);
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_float(t->as<uint16_t>()[i]);
      break;
    default:
      return std::nullopt;
  }
  return out;
}

std::optional<std::vector<int64_t>> int_constant(const ir::Graph& graph, ir::ValueId v) {
  const ir::TensorData* t = constant_of(graph, v);
  if (t == nullptr) return std::nullopt;
  const int64_t n = t->element_count();
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (t->dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < n; ++i) out[i] = t->as<int64_t>()[i];
  } else if (t->dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < n; ++i) out[i] = t->as<int32_t>()[i];
  } else {
    return std::nullopt;
  }
  return out;
}

std::optional<double> scalar_constant(const ir::Graph& graph, ir::ValueId v) {
  const ir::TensorData* t = constant_of(graph, v);
  if (t == nullptr || t->element_count() != 1) return std::nullopt;
  if (auto f = float_constant(graph, v)) return (*f)[0];
  if (auto i = int_constant(graph, v)) return static_cast<double>((*i)[0]);
  return std::nullopt;
}

std::string unique_value_name(const ir::Graph& graph, const std::string& base) {
  if (!graph.find_value(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!graph.find_value(candidate)) return candidate;
  }
}

ir::ValueId add_constant(ir::Graph& graph, const std::string& base, ir::TensorDataPtr data) {
  ir::Value v;
  v.name = unique_value_name(graph, base);
  v.dtype = data->dtype();
  v.shape = ir::Shape::of(data->dims());
  v.constant = std::move(data);
  return graph.add_value(std::move(v));
}

ir::TensorDataPtr make_int64_tensor(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return std::make_shared<const ir::TensorData>(DataType::kInt64, dims, std::move(bytes));
}

ir::TensorDataPtr make_float_tensor(DataType dtype, const std::vector<int64_t>& dims,
                                    const std::vector<double>& values) {
  if (dtype != DataType::kFloat64 && dtype != DataType::kFloat16 && dtype != DataType::kBFloat16)
    dtype = DataType::kFloat32;
  const size_t n = values.size();
  std::vector<uint8_t> bytes(n * storage_bytes(dtype, 1));
  // Folded weights can hold millions of elements: one typed pass, no per-element growth.
  auto fill = [&](auto* out, auto convert) {
    for (size_t i = 0; i < n; ++i) out[i] = convert(values[i]);
  };
  switch (dtype) {
    case DataType::kFloat64:
      fill(reinterpret_cast<double*>(bytes.data()), [](double d) { return d; });
      break;
    case DataType::kFloat16:
      fill(reinterpret_cast<uint16_t*>(bytes.data()),
           [](double d) { return float_to_half(static_cast<float>(d)); });
      break;
    case DataType::kBFloat16:
      fill(reinterpret_cast<uint16_t*>(bytes.data()),
           [](double d) { return float_to_bf16(static_cast<float>(d)); });
      break;
    default:
      fill(reinterpret_cast<float*>(bytes.data()), [](double d) { return static_cast<float>(d); });
      break;
  }
  return std::make_shared<const ir::TensorData>(dtype, dims, std::move(bytes));
}

ir::TensorDataPtr scale_outer_slices(const ir::TensorData& t, const std::vector<double>& factors) {
  if (t.dims().empty() || t.dims()[0] != static_cast<int64_t>(factors.size()) || factors.empty())
    return nullptr;
  const size_t rows = factors.size();
  const size_t per_row = static_cast<size_t>(t.element_count()) / rows;
  std::vector<uint8_t> bytes(t.size_bytes());
  auto scale = [&](auto* out, const auto* in, auto load, auto store) {
    for (size_t r = 0; r < rows; ++r)
      for (size_t k = r * per_row, end = k + per_row; k < end; ++k)
        out[k] = store(load(in[k]) * factors[r]);
  };
  const auto same = [](double v) { return v; };
  switch (t.dtype()) {
    case DataType::kFloat32:
      scale(reinterpret_cast<float*>(bytes.data()), t.as<float>(), same,
            [](double v) { return static_cast<float>(v); });
      break;
    case DataType::kFloat64:
      scale(reinterpret_cast<double*>(bytes.data()), t.as<double>(), same, same);
      break;
    case DataType::kFloat16:
      scale(reinterpret_cast<uint16_t*>(bytes.data()), t.as<uint16_t>(),
            [](uint16_t h) { return static_cast<double>(half_to_float(h)); },
            [](double v) { return float_to_half(static_cast<float>(v)); });
      break;
    case DataType::kBFloat16:
      scale(reinterpret_cast<uint16_t*>(bytes.data()), t.as<uint16_t>(),
            [](uint16_t h) { return static_cast<double>(bf16_to_float(h)); },
            [](double v) { return float_to_bf16(static_cast<float>(v)); });
      break;
    default:
      return nullptr;
  }
  return std::make_shared<const ir::TensorData>(t.dtype(), t.dims(), std::move(bytes));
}

ir::ValueId add_value(ir::Graph& graph, const std::string& base, DataType dtype,
                      ir::Shape shape) {
  ir::Value v;
  v.name = unique_value_name(graph, base);
  v.dtype = dtype;
  v.shape = std::move(shape);
  return graph.add_value(std::move(v));
}

bool same_dim(const ir::Dim& a, const ir::Dim& b) {
  if (a.is_known() || b.is_known()) return a.value == b.value;
  return !a.param.empty() && a.param == b.param;
}

bool same_shape(const ir::Shape& a, const ir::Shape& b) {
  if (!a.rank_known() || !b.rank_known() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!same_dim((*a.dims)[i], (*b.dims)[i])) return false;
  return true;
}

ir::Attribute attr_int(const std::string& name, int64_t value) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kInt;
  a.i = value;
  return a;
}

ir::Attribute attr_float(const std::string& name, double value) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kFloat;
  a.f = value;
  return a;
}

ir::Attribute attr_string(const std::string& name, std::string value) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kString;
  a.s = std::move(value);
  return a;
}

ir::Attribute attr_ints(const std::string& name, std::vector<int64_t> values) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kInts;
  a.ints = std::move(values);
  return a;
}

ir::Attribute attr_floats(const std::string& name, std::vector<double> values) {
  ir::Attribute a;
  a.name = name;
  a.type = ir::AttrType::kFloats;
  a.floats = std::move(values);
  return a;
}

void set_attr(ir::Node& node, ir::Attribute attr) {
  for (ir::Attribute& a : node.attributes)
    if (a.name == attr.name) {
      a = std::move(attr);
      return;
    }
  node.attributes.push_back(std::move(attr));
}

void remove_attr(ir::Node& node, const std::string& name) {
  std::erase_if(node.attributes, [&](const ir::Attribute& a) { return a.name == name; });
}

std::vector<int64_t> attr_ints_or(const ir::Node& node, const std::string& name,
                                  std::vector<int64_t> fallback) {
  const ir::Attribute* a = node.attr(name);
  return a != nullptr ? a->ints : fallback;
}

ir::NodeId sole_consumer(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v,
                         const char* op, const std::vector<bool>& claimed) {
  if (!index.has_single_use(v)) return ir::kNoNode;
  const ir::NodeId id = index.consumers(v).front();
  const ir::Node& n = graph.node(id);
  if (claimed[id] || n.op_type != op || !n.domain.empty() || n.outputs.size() != 1 ||
      has_subgraphs(n))
    return ir::kNoNode;
  return id;
}

ir::NodeId sole_producer(const ir::Graph& graph, const GraphIndex& index, ir::ValueId v,
                         const char* op, const std::vector<bool>& claimed) {
  if (!index.has_single_use(v)) return ir::kNoNode;
  const ir::NodeId id = index.producer_id(v);
  if (id == ir::kNoNode) return ir::kNoNode;
  const ir::Node& n = graph.node(id);
  if (claimed[id] || n.op_type != op || !n.domain.empty() || n.outputs.size() != 1)
    return ir::kNoNode;
  return id;
}

ir::ValueId other_operand(const ir::Node& n, ir::ValueId v) {
  if (n.inputs.size() != 2) return ir::kNoValue;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return ir::kNoValue;
}

bool has_subgraphs(const ir::Node& node) {
  for (const ir::Attribute& a : node.attributes)
    if (!a.graphs.empty()) return true;
  return false;
}

void replace_uses(ir::Graph& graph, ir::ValueId from, ir::ValueId to) {
  for (ir::Node& node : graph.mutable_nodes())
    for (ir::ValueId& in : node.inputs)
      if (in == from) in = to;
}

bool bypass(ir::Graph& graph, const GraphIndex& index, ir::ValueId kept, ir::ValueId dropped) {
  if (kept == ir::kNoValue || dropped == ir::kNoValue) return false;
  const bool name_must_survive = index.is_graph_output(dropped) || index.is_captured(dropped);
  if (!name_must_survive) {
    replace_uses(graph, dropped, kept);
    return true;
  }
  // The producer of `kept` writes `dropped` instead; `kept`'s other readers follow.
  // Impossible when `kept` itself must keep its name, or no node produces it.
  const ir::NodeId producer = index.producer_id(kept);
  if (producer == ir::kNoNode || index.is_graph_output(kept) || index.is_captured(kept))
    return false;
  if (graph.value(kept).dtype != graph.value(dropped).dtype) return false;
  replace_uses(graph, kept, dropped);
  for (ir::ValueId& out : graph.node(producer).outputs)
    if (out == kept) out = dropped;
  return true;
}

bool remove_forwarding_node(ir::Graph& graph, const GraphIndex& index, ir::NodeId id,
                            ir::ValueId kept, ir::ValueId dropped, std::vector<bool>& remove) {
  const bool renames = index.is_graph_output(dropped) || index.is_captured(dropped);
  if (!bypass(graph, index, kept, dropped)) return false;
  ir::Node& node = graph.node(id);
  node.inputs.clear();
  node.outputs.clear();
  if (id >= remove.size()) remove.resize(id + 1, false);
  remove[id] = true;
  // bypass() made kept's producer write `dropped`: the producers GraphIndex reads from the
  // graph must follow before the next bypass() looks them up.
  if (renames) graph.rebuild_links();
  return true;
}

Status commit(ir::Graph& graph, const std::vector<bool>& remove) {
  graph.erase_nodes(remove);
  graph.rebuild_links();
  return graph.topological_sort();
}

}  // namespace infer::optimizer
