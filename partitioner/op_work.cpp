#include "partitioner/op_work.hpp"

#include <algorithm>
#include <string>

namespace infer::partitioner {
namespace {

int64_t product(const std::vector<int64_t>& dims, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i) p *= dims[i];
  return p;
}

const ir::Value* input(const ir::Graph& g, const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == ir::kNoValue) return nullptr;
  return &g.value(n.inputs[i]);
}

std::optional<std::vector<int64_t>> dims_of(const ir::Value* v, int64_t assumed_dim) {
  if (v == nullptr) return std::nullopt;
  return resolved_dims(*v, assumed_dim);
}

// Output elements times a per-output-element cost; -1 when a shape is unknown.
double flops_of(const ir::Graph& g, const ir::Node& n, int64_t assumed_dim) {
  const bool fused = n.domain == "ai.infer";
  const bool onnx = n.domain.empty() || n.domain == "ai.onnx";
  const std::string& op = n.op_type;
  if (n.outputs.empty() || n.outputs[0] == ir::kNoValue) return 0;
  const auto y = resolved_dims(g.value(n.outputs[0]), assumed_dim);
  if (!y) return -1;
  const double out_elements = static_cast<double>(product(*y, 0));

  // A convolution does 2 * (C/group * kernel) multiply-adds per output element; W is
  // [M, C/group, k...], so that factor is W's element count over its first dim.
  if ((onnx && (op == "Conv" || op == "ConvInteger")) || (fused && op == "FusedConv") ||
      (onnx && op == "QLinearConv")) {
    const auto w = dims_of(input(g, n, op == "QLinearConv" ? 3 : 1), assumed_dim);
    if (!w || w->empty()) return -1;
    return 2.0 * out_elements * static_cast<double>(product(*w, 1));
  }
  // ConvTranspose scatters each input element over (M/group * kernel) outputs; W is
  // [C, M/group, k...].
  if (onnx && op == "ConvTranspose") {
    const auto x = dims_of(input(g, n, 0), assumed_dim);
    const auto w = dims_of(input(g, n, 1), assumed_dim);
    if (!x || !w || w->empty()) return -1;
    return 2.0 * static_cast<double>(product(*x, 0)) * static_cast<double>(product(*w, 1));
  }
  // A matrix product does 2 * K per output element, K being A's last dim.
  if ((onnx && (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul")) ||
      (fused && op == "FusedMatMul")) {
    const auto a = dims_of(input(g, n, 0), assumed_dim);
    if (!a || a->empty()) return -1;
    return 2.0 * out_elements * static_cast<double>(a->back());
  }
  if ((onnx && op == "Gemm") || (fused && op == "FusedGemm")) {
    const auto a = dims_of(input(g, n, 0), assumed_dim);
    if (!a || a->size() != 2) return -1;
    const int64_t k = n.attr_int("transA", 0) != 0 ? (*a)[0] : (*a)[1];
    return 2.0 * out_elements * static_cast<double>(k);
  }
  // Attention on unsplit heads: Q [B, Sq, H*Dk], K [B, Sk, H*Dk], V [B, Sk, H*Dv]. The
  // two products are 2*B*Sq*Sk*(H*Dk) and 2*B*Sq*Sk*(H*Dv); the softmax about five
  // operations per score.
  if (fused && op == "Attention") {
    const auto q = dims_of(input(g, n, 0), assumed_dim);
    const auto k = dims_of(input(g, n, 1), assumed_dim);
    const auto v = dims_of(input(g, n, 2), assumed_dim);
    if (!q || !k || !v || q->size() != 3 || k->size() != 3 || v->size() != 3) return -1;
    const double b = static_cast<double>((*q)[0]), sq = static_cast<double>((*q)[1]);
    const double sk = static_cast<double>((*k)[1]);
    const double heads = static_cast<double>(std::max<int64_t>(1, n.attr_int("num_heads", 1)));
    return 2.0 * b * sq * sk * static_cast<double>((*q)[2]) +
           2.0 * b * sq * sk * static_cast<double>((*v)[2]) + 5.0 * b * heads * sq * sk;
  }
  double elements = 0;
  for (ir::ValueId o : n.outputs) {
    if (o == ir::kNoValue) continue;
    const auto d = resolved_dims(g.value(o), assumed_dim);
    if (!d) return -1;
    elements += static_cast<double>(product(*d, 0));
  }
  return elements;
}

}  // namespace

std::optional<std::vector<int64_t>> resolved_dims(const ir::Value& v, int64_t assumed_dim) {
  if (v.constant) return v.constant->dims();
  if (!v.shape.dims) return std::nullopt;
  std::vector<int64_t> dims;
  dims.reserve(v.shape.dims->size());
  for (const ir::Dim& d : *v.shape.dims) {
    if (d.is_known()) {
      dims.push_back(d.value);
    } else if (assumed_dim > 0) {
      dims.push_back(assumed_dim);
    } else {
      return std::nullopt;
    }
  }
  return dims;
}

int64_t value_bytes(const ir::Value& v, int64_t assumed_dim) {
  if (v.dtype == DataType::kString || v.dtype == DataType::kUndefined) return -1;
  if (v.constant) return static_cast<int64_t>(v.constant->size_bytes());
  const auto dims = resolved_dims(v, assumed_dim);
  if (!dims) return -1;
  return static_cast<int64_t>(storage_bytes(v.dtype, product(*dims, 0)));
}

OpWork estimate_work(const ir::Graph& g, const ir::Node& n, int64_t assumed_dim) {
  OpWork work;
  double bytes = 0;
  for (const auto* list : {&n.inputs, &n.outputs}) {
    for (ir::ValueId v : *list) {
      if (v == ir::kNoValue) continue;
      const int64_t b = value_bytes(g.value(v), assumed_dim);
      if (b < 0) return work;
      bytes += static_cast<double>(b);
    }
  }
  const double flops = flops_of(g, n, assumed_dim);
  if (flops < 0) return work;
  work.flops = flops;
  work.bytes = bytes;
  return work;
}

double default_time_us(const OpWork& work, const Throughput& t) {
  if (!work.known() || t.flops_per_us <= 0 || t.bytes_per_us <= 0) return -1;
  return t.launch_us + std::max(work.flops / t.flops_per_us, work.bytes / t.bytes_per_us);
}

}  // namespace infer::partitioner
