#include "pipelines.hpp"

#include "device.hpp"

namespace infer::vk {

PipelineCache::~PipelineCache() {
  const DeviceFns& vk = device_.vk();
  VkDevice d = device_.handle();
  for (auto& [key, p] : pipelines_) vk.vkDestroyPipeline(d, p->pipeline, nullptr);
  for (auto& [n, l] : layouts_) {
    vk.vkDestroyPipelineLayout(d, l.layout, nullptr);
    vk.vkDestroyDescriptorSetLayout(d, l.set_layout, nullptr);
  }
  for (auto& [s, m] : modules_) vk.vkDestroyShaderModule(d, m, nullptr);
  if (cache_ != VK_NULL_HANDLE) vk.vkDestroyPipelineCache(d, cache_, nullptr);
}

MaybeFailure PipelineCache::init() {
  VkPipelineCacheCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  if (VkResult r = device_.vk().vkCreatePipelineCache(device_.handle(), &info, nullptr, &cache_);
      r != VK_SUCCESS) {
    cache_ = VK_NULL_HANDLE;
    return vk_failure(r, "vkCreatePipelineCache");
  }
  return std::nullopt;
}

size_t PipelineCache::size() const {
  std::lock_guard lock(mu_);
  return pipelines_.size();
}

MaybeFailure PipelineCache::layout_for(uint32_t n, Layout** out) {
  if (auto it = layouts_.find(n); it != layouts_.end()) {
    *out = &it->second;
    return std::nullopt;
  }
  const DeviceFns& vk = device_.vk();
  std::vector<VkDescriptorSetLayoutBinding> bindings(n);
  for (uint32_t i = 0; i < n; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{};
  set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_info.bindingCount = n;
  set_info.pBindings = bindings.data();
  Layout l;
  if (VkResult r = vk.vkCreateDescriptorSetLayout(device_.handle(), &set_info, nullptr,
                                                  &l.set_layout);
      r != VK_SUCCESS)
    return vk_failure(r, "vkCreateDescriptorSetLayout");
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  info.setLayoutCount = 1;
  info.pSetLayouts = &l.set_layout;
  info.pushConstantRangeCount = 1;
  info.pPushConstantRanges = &push;
  if (VkResult r = vk.vkCreatePipelineLayout(device_.handle(), &info, nullptr, &l.layout);
      r != VK_SUCCESS) {
    vk.vkDestroyDescriptorSetLayout(device_.handle(), l.set_layout, nullptr);
    return vk_failure(r, "vkCreatePipelineLayout");
  }
  *out = &(layouts_[n] = l);
  return std::nullopt;
}

MaybeFailure PipelineCache::module_for(const Shader& shader, VkShaderModule* out) {
  if (auto it = modules_.find(&shader); it != modules_.end()) {
    *out = it->second;
    return std::nullopt;
  }
  VkShaderModuleCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  info.codeSize = shader.num_words * sizeof(uint32_t);
  info.pCode = shader.words;
  VkShaderModule m = VK_NULL_HANDLE;
  if (VkResult r = device_.vk().vkCreateShaderModule(device_.handle(), &info, nullptr, &m);
      r != VK_SUCCESS)
    return vk_failure(r, std::string("vkCreateShaderModule for shader '") + shader.name + "'");
  modules_[&shader] = m;
  *out = m;
  return std::nullopt;
}

MaybeFailure PipelineCache::get(const Shader& shader, const std::vector<uint32_t>& spec,
                                uint32_t num_bindings, const Pipeline** out) {
  std::lock_guard lock(mu_);
  Key key{&shader, spec, num_bindings};
  if (auto it = pipelines_.find(key); it != pipelines_.end()) {
    *out = it->second.get();
    return std::nullopt;
  }
  Layout* layout = nullptr;
  if (MaybeFailure f = layout_for(num_bindings, &layout)) return f;
  VkShaderModule module = VK_NULL_HANDLE;
  if (MaybeFailure f = module_for(shader, &module)) return f;

  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i)
    entries[i] = VkSpecializationMapEntry{i, i * 4u, sizeof(uint32_t)};
  VkSpecializationInfo spec_info{};
  spec_info.mapEntryCount = static_cast<uint32_t>(entries.size());
  spec_info.pMapEntries = entries.data();
  spec_info.dataSize = spec.size() * sizeof(uint32_t);
  spec_info.pData = spec.data();

  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = spec.empty() ? nullptr : &spec_info;
  info.layout = layout->layout;
  auto p = std::make_unique<Pipeline>();
  if (VkResult r = device_.vk().vkCreateComputePipelines(device_.handle(), cache_, 1, &info,
                                                         nullptr, &p->pipeline);
      r != VK_SUCCESS)
    return vk_failure(r, std::string("vkCreateComputePipelines for shader '") + shader.name + "'");
  p->layout = layout->layout;
  p->set_layout = layout->set_layout;
  p->num_bindings = num_bindings;
  *out = p.get();
  pipelines_[std::move(key)] = std::move(p);
  return std::nullopt;
}

}  // namespace infer::vk
