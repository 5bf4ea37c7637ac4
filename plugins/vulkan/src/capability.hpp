// query_capability and the checks compile repeats: whether this device runs a node.
#pragma once

#include <string>

#include "device.hpp"
#include "op_kernel.hpp"

namespace infer::vk {

// The runtime's own checks before the kernel's (a known op, no subgraphs, storable
// dtypes the device can address), then the kernel's check. Returns the support level;
// *kernel is set when an OpKernel exists. *reason explains a NO.
infer_support check_node(const Device& device, const infer_node_view& node,
                         const OpKernel** kernel, std::string* reason);

// Fills the ABI's capability answer, with a time estimate from the kernel's flops.
void query_capability(const Device& device, const infer_node_view& node, infer_capability* out);

}  // namespace infer::vk
