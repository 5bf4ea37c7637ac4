// Compute pipelines, created once per device for each (shader, specialization constants,
// binding count) and kept for the device's life, plus the descriptor-set and pipeline
// layouts they share. Creating a pipeline compiles the SPIR-V to machine code, which is
// slow (milliseconds; far more on lavapipe), so plans resolve their pipelines once when
// they are built and executions only bind them. A VkPipelineCache lets the driver reuse
// its compiled code across pipelines that differ only in details.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "failure.hpp"
#include "op_kernel.hpp"

namespace infer::vk {

class Device;

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t num_bindings = 0;
};

class PipelineCache {
 public:
  // Every pipeline layout reserves the full 128 bytes of push constants that Vulkan
  // guarantees, so any shader's push_constant block fits.
  static constexpr uint32_t kPushConstantBytes = 128;

  explicit PipelineCache(Device& device) : device_(device) {}
  ~PipelineCache();
  PipelineCache(const PipelineCache&) = delete;
  PipelineCache& operator=(const PipelineCache&) = delete;

  MaybeFailure init();
  // The pipeline for `shader` with `spec` as specialization constants 0, 1, ... and
  // `num_bindings` storage buffers at set 0. The pointer stays valid for the device's
  // life. Thread-safe.
  MaybeFailure get(const Shader& shader, const std::vector<uint32_t>& spec, uint32_t num_bindings,
                   const Pipeline** out);
  size_t size() const;

 private:
  struct Key {
    const Shader* shader;
    std::vector<uint32_t> spec;
    uint32_t num_bindings;
    bool operator<(const Key& o) const {
      if (shader != o.shader) return shader < o.shader;
      if (num_bindings != o.num_bindings) return num_bindings < o.num_bindings;
      return spec < o.spec;
    }
  };
  struct Layout {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
  };
  MaybeFailure layout_for(uint32_t num_bindings, Layout** out);
  MaybeFailure module_for(const Shader& shader, VkShaderModule* out);

  Device& device_;
  mutable std::mutex mu_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::map<uint32_t, Layout> layouts_;                   // by binding count
  std::map<const Shader*, VkShaderModule> modules_;
  std::map<Key, std::unique_ptr<Pipeline>> pipelines_;
};

}  // namespace infer::vk
