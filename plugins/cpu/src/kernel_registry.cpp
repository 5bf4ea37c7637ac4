#include "kernel_registry.hpp"

#include <cstring>

namespace infer::cpu {

// Declarations of every family's check and create functions, generated from the list so
// that adding a kernel is one file plus one line.
namespace kernels {
#define CPU_KERNEL(domain, op, since, until, types, type_input, family) \
  Status family##_check(const infer_node_view& node);                   \
  Result<KernelPtr> family##_create(const KernelInit& init);
#include "kernel_list.inc"
#undef CPU_KERNEL
}  // namespace kernels

namespace {

using namespace dtypes;  // NOLINT: the table reads better with short names

constexpr KernelDef kTable[] = {
#define CPU_KERNEL(domain, op, since, until, types, type_input, family) \
  {domain,                                                              \
   op,                                                                  \
   since,                                                               \
   until,                                                               \
   types,                                                               \
   type_input,                                                          \
   &kernels::family##_check,                                            \
   &kernels::family##_create},
#include "kernel_list.inc"
#undef CPU_KERNEL
};

// The default ONNX domain has two spellings.
bool same_domain(const char* a, const char* b) {
  auto norm = [](const char* d) {
    return (d == nullptr || std::strcmp(d, "ai.onnx") == 0) ? "" : d;
  };
  return std::strcmp(norm(a), norm(b)) == 0;
}

}  // namespace

std::span<const KernelDef> kernel_table() { return kTable; }

Result<const KernelDef*> select_kernel(const infer_node_view& node) {
  const char* op = node.op_type ? node.op_type : "";
  const char* domain = node.domain ? node.domain : "";
  const KernelDef* by_name = nullptr;
  std::string ranges;
  for (const KernelDef& def : kTable) {
    if (!same_domain(def.domain, domain) || std::strcmp(def.op_type, op) != 0) continue;
    by_name = &def;
    ranges += cat(ranges.empty() ? "" : ", ", def.since_opset, "-", def.until_opset);
    if (node.opset < def.since_opset || node.opset > def.until_opset) continue;
    if (def.type_input >= 0) {
      const infer_value_view* v = static_cast<size_t>(def.type_input) < node.num_inputs
                                      ? node.inputs[def.type_input]
                                      : nullptr;
      if (v != nullptr &&
          (static_cast<uint32_t>(v->dtype) >= 32 || (dtype_bit(v->dtype) & def.dtypes) == 0))
        return unsupported("cpu: ", op, " does not support dtype ", dtype_name(v->dtype),
                           " (input ", def.type_input, " '", v->name ? v->name : "", "')");
    }
    Status st = def.check(node);
    if (!st.is_ok()) return Status(INFER_STATUS_UNSUPPORTED, "cpu: " + st.message());
    return &def;
  }
  if (by_name == nullptr) return unsupported("cpu: no kernel for ", op, " (domain '", domain, "')");
  return unsupported("cpu: ", op, " opset ", node.opset, " not supported (kernels cover opsets ",
                     ranges, ")");
}

}  // namespace infer::cpu
