// The kernel table: one line per kernel (kernel_list.inc), read by the capability query,
// by compile and by the tests. A line names the op (domain, op_type), the opset range
// whose semantics the kernel implements, the dtypes accepted for its "type input", and
// the family's check and create functions.
#pragma once

#include <span>
#include <string>

#include "kernel.hpp"

namespace infer::cpu {

// Why a node is not supported, without the "cpu: " prefix (the registry adds it).
using CheckFn = Status (*)(const infer_node_view& node);
using CreateFn = Result<KernelPtr> (*)(const KernelInit& init);

struct KernelDef {
  const char* domain;
  const char* op_type;
  int64_t since_opset;  // first opset version implemented
  int64_t until_opset;  // last opset version whose semantics the kernel implements
  uint32_t dtypes;      // dtype_bit set accepted for input `type_input`
  int type_input;       // -1: the check function decides alone
  CheckFn check;
  CreateFn create;
};

std::span<const KernelDef> kernel_table();

// Finds the kernel for `node` and runs its checks. On failure, returns an UNSUPPORTED
// status whose message is the reason, starting "cpu: ".
Result<const KernelDef*> select_kernel(const infer_node_view& node);

}  // namespace infer::cpu
