#include "kernel_table.hpp"

namespace infer::vk {
namespace {

std::vector<OpKernel> build_table() {
  std::vector<OpKernel> table;
  add_elementwise_ops(table);
  add_matmul_ops(table);
  add_conv_ops(table);
  add_pool_ops(table);
  add_norm_ops(table);
  add_shape_ops(table);
  add_resize_ops(table);
  add_reduce_ops(table);
  return table;
}

std::string_view normal_domain(std::string_view d) { return d == "ai.onnx" ? "" : d; }

}  // namespace

const std::vector<OpKernel>& all_kernels() {
  static const std::vector<OpKernel> table = build_table();
  return table;
}

const OpKernel* find_kernel(std::string_view domain, std::string_view op_type) {
  domain = normal_domain(domain);
  for (const OpKernel& k : all_kernels())
    if (op_type == k.op_type && domain == normal_domain(k.domain ? k.domain : "")) return &k;
  return nullptr;
}

}  // namespace infer::vk
