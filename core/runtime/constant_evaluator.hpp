// The optimizer's constant folding runs nodes on a backend's own kernels (the CPU
// plugin), through the same ABI calls a session uses, so that a folded constant is
// bit-for-bit what the node would have computed at run time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "optimizer/pass.hpp"
#include "plugin_host/device.hpp"

namespace infer::runtime {

class PluginConstantEvaluator final : public optimizer::ConstantEvaluator {
 public:
  // `device` must be host-addressable (its buffers mappable); `opsets` are the model's.
  PluginConstantEvaluator(host::Device device, std::map<std::string, int64_t> opsets)
      : device_(std::move(device)), opsets_(std::move(opsets)) {}

  // Compiles a one-node graph whose inputs are the node's constants, executes it once and
  // copies the outputs out. Unsupported when the backend does not claim the node.
  Result<std::vector<ir::TensorDataPtr>> evaluate(const ir::Graph& graph,
                                                  const ir::Node& node) const override;

 private:
  host::Device device_;
  std::map<std::string, int64_t> opsets_;
};

}  // namespace infer::runtime
