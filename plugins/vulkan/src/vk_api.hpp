// The Vulkan entry points the plugin calls, loaded at run time.
//
// The plugin does not link libvulkan: it opens the loader with dlopen when the first
// device is needed. A machine without a Vulkan loader then still loads the plugin, which
// reports zero devices and says why, as the ABI asks ("a plugin whose driver is missing
// loads"). Linking the loader would make dlopen of the plugin itself fail there.
//
// Instance-level functions live in InstanceFns (one table per VkInstance), device-level
// ones in DeviceFns (one per VkDevice, resolved with vkGetDeviceProcAddr so calls skip the
// loader's trampolines).
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace infer::vk {

#define INFER_VK_GLOBAL_FNS(X)             \
  X(vkEnumerateInstanceVersion)            \
  X(vkEnumerateInstanceLayerProperties)    \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkCreateInstance)

#define INFER_VK_INSTANCE_FNS(X)                \
  X(vkDestroyInstance)                          \
  X(vkEnumeratePhysicalDevices)                 \
  X(vkGetPhysicalDeviceProperties)              \
  X(vkGetPhysicalDeviceProperties2)             \
  X(vkGetPhysicalDeviceFeatures)                \
  X(vkGetPhysicalDeviceFeatures2)               \
  X(vkGetPhysicalDeviceQueueFamilyProperties)   \
  X(vkGetPhysicalDeviceMemoryProperties)        \
  X(vkEnumerateDeviceExtensionProperties)       \
  X(vkCreateDevice)                             \
  X(vkGetDeviceProcAddr)

#define INFER_VK_DEBUG_FNS(X)         \
  X(vkCreateDebugUtilsMessengerEXT)   \
  X(vkDestroyDebugUtilsMessengerEXT)

#define INFER_VK_DEVICE_FNS(X)        \
  X(vkDestroyDevice)                  \
  X(vkGetDeviceQueue)                 \
  X(vkDeviceWaitIdle)                 \
  X(vkQueueSubmit)                    \
  X(vkAllocateMemory)                 \
  X(vkFreeMemory)                     \
  X(vkMapMemory)                      \
  X(vkUnmapMemory)                    \
  X(vkCreateBuffer)                   \
  X(vkDestroyBuffer)                  \
  X(vkGetBufferMemoryRequirements)    \
  X(vkBindBufferMemory)               \
  X(vkCreateSemaphore)                \
  X(vkDestroySemaphore)               \
  X(vkCreateFence)                    \
  X(vkDestroyFence)                   \
  X(vkWaitForFences)                  \
  X(vkGetFenceStatus)                 \
  X(vkResetFences)                    \
  X(vkCreateCommandPool)              \
  X(vkDestroyCommandPool)             \
  X(vkAllocateCommandBuffers)         \
  X(vkFreeCommandBuffers)             \
  X(vkResetCommandBuffer)             \
  X(vkBeginCommandBuffer)             \
  X(vkEndCommandBuffer)               \
  X(vkCmdCopyBuffer)                  \
  X(vkCmdFillBuffer)                  \
  X(vkCmdPipelineBarrier)             \
  X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets)          \
  X(vkCmdPushConstants)               \
  X(vkCmdDispatch)                    \
  X(vkCreateShaderModule)             \
  X(vkDestroyShaderModule)            \
  X(vkCreatePipelineCache)            \
  X(vkDestroyPipelineCache)           \
  X(vkCreateComputePipelines)         \
  X(vkDestroyPipeline)                \
  X(vkCreatePipelineLayout)           \
  X(vkDestroyPipelineLayout)          \
  X(vkCreateDescriptorSetLayout)      \
  X(vkDestroyDescriptorSetLayout)     \
  X(vkCreateDescriptorPool)           \
  X(vkDestroyDescriptorPool)          \
  X(vkAllocateDescriptorSets)         \
  X(vkUpdateDescriptorSets)

// Timeline semaphore entry points: core names on Vulkan 1.2, the KHR names (same
// signatures) from VK_KHR_timeline_semaphore on 1.1.
#define INFER_VK_TIMELINE_FNS(X) \
  X(vkSignalSemaphore)           \
  X(vkWaitSemaphores)            \
  X(vkGetSemaphoreCounterValue)

#define INFER_VK_DECLARE(name) PFN_##name name = nullptr;

struct InstanceFns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  INFER_VK_GLOBAL_FNS(INFER_VK_DECLARE)
  INFER_VK_INSTANCE_FNS(INFER_VK_DECLARE)
  INFER_VK_DEBUG_FNS(INFER_VK_DECLARE)
};

struct DeviceFns {
  INFER_VK_DEVICE_FNS(INFER_VK_DECLARE)
  INFER_VK_TIMELINE_FNS(INFER_VK_DECLARE)
};

#undef INFER_VK_DECLARE

// Opens the Vulkan loader (once per process; it stays loaded) and fills the global entry
// points. False with *error set when there is no loader.
bool load_vulkan_loader(InstanceFns* fns, std::string* error);
// Fills the instance-level entry points for `instance` (debug utils only when enabled).
// False with *error naming the first missing function.
bool load_instance_fns(VkInstance instance, bool debug_utils, InstanceFns* fns,
                       std::string* error);
// Fills the device-level entry points. `timeline_khr`: take the timeline functions under
// their KHR names (a Vulkan 1.1 device with VK_KHR_timeline_semaphore).
bool load_device_fns(const InstanceFns& ifns, VkDevice device, bool timeline_khr, DeviceFns* fns,
                     std::string* error);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for a VkResult; "VkResult(<n>)" for unknown codes.
const char* vk_result_name(VkResult result);

}  // namespace infer::vk
