#include "capability.hpp"

#include "kernel_table.hpp"

namespace infer::vk {
namespace {

// Dtypes a tensor may have on this plugin at all (the kernels narrow it further). 4-bit
// and string tensors have no addressable element, float64 is rarely supported by GPUs.
bool storable(const Device& device, infer_dtype t, std::string* why) {
  switch (t) {
    case INFER_DTYPE_FLOAT32:
    case INFER_DTYPE_INT32:
    case INFER_DTYPE_UINT32:
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16:
    case INFER_DTYPE_INT16:
    case INFER_DTYPE_UINT16:
      return true;
    case INFER_DTYPE_BOOL:
    case INFER_DTYPE_INT8:
    case INFER_DTYPE_UINT8:
      if (device.storage_8bit()) return true;
      *why = "the device lacks 8-bit storage (storageBuffer8BitAccess) for " + dtype_name(t);
      return false;
    case INFER_DTYPE_INT64:
    case INFER_DTYPE_UINT64:
      if (device.shader_int64()) return true;
      *why = "the device lacks shaderInt64 for " + dtype_name(t);
      return false;
    default:
      *why = "dtype " + dtype_name(t) + " is not supported by the vulkan plugin";
      return false;
  }
}

int64_t known_elements(const infer_value_view* v) {
  if (v == nullptr || v->rank < 0 || (v->rank > 0 && v->dims == nullptr)) return -1;
  int64_t n = 1;
  for (int64_t i = 0; i < v->rank; ++i) {
    if (v->dims[i] < 0) return -1;
    n *= v->dims[i];
  }
  return n;
}

}  // namespace

infer_support check_node(const Device& device, const infer_node_view& node,
                         const OpKernel** kernel, std::string* reason) {
  *kernel = nullptr;
  const std::string op = node.op_type ? node.op_type : "";
  const std::string domain = node.domain ? node.domain : "";
  const OpKernel* k = find_kernel(domain, op);
  if (k == nullptr) {
    *reason = "no vulkan kernel for " + (domain.empty() ? "" : domain + ":") + op;
    return INFER_SUPPORT_NO;
  }
  *kernel = k;
  for (size_t i = 0; i < node.num_attrs; ++i) {
    const infer_attr_view& a = node.attrs[i];
    if (a.type == INFER_ATTR_GRAPH || a.type == INFER_ATTR_GRAPHS) {
      *reason = std::string("subgraph attribute '") + (a.name ? a.name : "") +
                "' (control flow runs on the host)";
      return INFER_SUPPORT_NO;
    }
  }
  for (size_t i = 0; i < node.num_inputs + node.num_outputs; ++i) {
    const infer_value_view* v =
        i < node.num_inputs ? node.inputs[i] : node.outputs[i - node.num_inputs];
    if (v == nullptr) continue;
    std::string why;
    if (!storable(device, v->dtype, &why)) {
      *reason = "value '" + value_name(v) + "': " + why;
      return INFER_SUPPORT_NO;
    }
  }
  std::string kernel_reason;
  infer_support s = k->check(node, &kernel_reason);
  *reason = kernel_reason;
  if (s == INFER_SUPPORT_NO && reason->empty()) *reason = "not supported by the " + op + " kernel";
  return s;
}

void query_capability(const Device& device, const infer_node_view& node, infer_capability* out) {
  const OpKernel* kernel = nullptr;
  std::string reason;
  infer_support s = check_node(device, node, &kernel, &reason);
  // lavapipe (a CPU-type device) runs shaders on the CPU, slower than the cpu plugin, so
  // there every supported node is only YES; on a GPU every supported node is PREFERRED.
  // The partitioner weighs the time estimates either way.
  if (s == INFER_SUPPORT_PREFERRED &&
      device.properties().deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU)
    s = INFER_SUPPORT_YES;
  if (s == INFER_SUPPORT_YES && device.properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU)
    s = INFER_SUPPORT_PREFERRED;
  out->support = s;
  if (!reason.empty()) sdk::set_reason(out, reason);
  if (s == INFER_SUPPORT_NO) return;

  double flops = kernel->flops ? kernel->flops(node) : -1.0;
  if (flops < 0) {
    // Memory-bound ops without a flops figure: one operation per output element.
    int64_t n = 0;
    bool known = true;
    for (size_t i = 0; i < node.num_outputs; ++i) {
      int64_t e = known_elements(node.outputs[i]);
      if (e < 0) known = false;
      else n += e;
    }
    if (known) flops = static_cast<double>(n);
  }
  if (INFER_HAS_FIELD(out, infer_capability, est_time_us) && flops >= 0)
    out->est_time_us = device.dispatch_overhead_us() + flops / device.flops_per_us();
  if (INFER_HAS_FIELD(out, infer_capability, est_memory_bytes)) {
    int64_t bytes = 0;
    for (size_t i = 0; i < node.num_outputs; ++i) {
      int64_t e = known_elements(node.outputs[i]);
      if (e < 0) return;
      bytes += static_cast<int64_t>(sdk::tensor_bytes(node.outputs[i]->dtype, e));
    }
    out->est_memory_bytes = bytes;
  }
}

}  // namespace infer::vk
