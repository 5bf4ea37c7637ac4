#include "vk_api.hpp"

#include <dlfcn.h>

#include <mutex>

namespace infer::vk {
namespace {

// The loader's file name on each platform the plugin targets. macOS uses MoltenVK's
// loader build; Linux the versioned soname (the unversioned one is a -dev symlink).
#if defined(__APPLE__)
constexpr const char* kLoaderNames[] = {"libvulkan.1.dylib", "libvulkan.dylib",
                                        "libMoltenVK.dylib"};
#else
constexpr const char* kLoaderNames[] = {"libvulkan.so.1", "libvulkan.so"};
#endif

std::once_flag g_loader_once;
PFN_vkGetInstanceProcAddr g_get_instance_proc_addr = nullptr;
std::string g_loader_error;

void open_loader() {
  std::string errors;
  for (const char* name : kLoaderNames) {
    // RTLD_LOCAL: the loader's symbols stay out of the global namespace. The handle is
    // deliberately never closed: the loader keeps process-wide state (layers, ICDs) that
    // must not be torn down while another plugin instance may still use it.
    void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
      continue;
    }
    g_get_instance_proc_addr =
        reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
    if (g_get_instance_proc_addr != nullptr) return;
    errors += std::string(errors.empty() ? "" : "; ") + name + " has no vkGetInstanceProcAddr";
  }
  g_loader_error = "no Vulkan loader (" + errors + ")";
}

}  // namespace

bool load_vulkan_loader(InstanceFns* fns, std::string* error) {
  std::call_once(g_loader_once, open_loader);
  if (g_get_instance_proc_addr == nullptr) {
    *error = g_loader_error;
    return false;
  }
  fns->vkGetInstanceProcAddr = g_get_instance_proc_addr;
#define INFER_VK_LOAD_GLOBAL(name) \
  fns->name = reinterpret_cast<PFN_##name>(g_get_instance_proc_addr(VK_NULL_HANDLE, #name));
  INFER_VK_GLOBAL_FNS(INFER_VK_LOAD_GLOBAL)
#undef INFER_VK_LOAD_GLOBAL
  // vkEnumerateInstanceVersion is absent from Vulkan 1.0 loaders; the caller treats a
  // NULL one as "1.0". The others exist in every loader.
  if (!fns->vkCreateInstance || !fns->vkEnumerateInstanceExtensionProperties ||
      !fns->vkEnumerateInstanceLayerProperties) {
    *error = "the Vulkan loader lacks vkCreateInstance";
    return false;
  }
  return true;
}

bool load_instance_fns(VkInstance instance, bool debug_utils, InstanceFns* fns,
                       std::string* error) {
#define INFER_VK_LOAD_INSTANCE(name)                                                        \
  fns->name = reinterpret_cast<PFN_##name>(fns->vkGetInstanceProcAddr(instance, #name));    \
  if (fns->name == nullptr) {                                                               \
    *error = "the Vulkan loader does not provide " #name;                                   \
    return false;                                                                           \
  }
  INFER_VK_INSTANCE_FNS(INFER_VK_LOAD_INSTANCE)
  if (debug_utils) {
    INFER_VK_DEBUG_FNS(INFER_VK_LOAD_INSTANCE)
  }
#undef INFER_VK_LOAD_INSTANCE
  return true;
}

bool load_device_fns(const InstanceFns& ifns, VkDevice device, bool timeline_khr, DeviceFns* fns,
                     std::string* error) {
#define INFER_VK_LOAD_DEVICE(name)                                                       \
  fns->name = reinterpret_cast<PFN_##name>(ifns.vkGetDeviceProcAddr(device, #name));     \
  if (fns->name == nullptr) {                                                            \
    *error = "the Vulkan driver does not provide " #name;                                \
    return false;                                                                        \
  }
  INFER_VK_DEVICE_FNS(INFER_VK_LOAD_DEVICE)
#undef INFER_VK_LOAD_DEVICE
#define INFER_VK_LOAD_TIMELINE(name)                                                       \
  fns->name = reinterpret_cast<PFN_##name>(                                                \
      ifns.vkGetDeviceProcAddr(device, timeline_khr ? #name "KHR" : #name));               \
  if (fns->name == nullptr) {                                                              \
    *error = std::string("the Vulkan driver does not provide ") + #name +                  \
             (timeline_khr ? "KHR" : "");                                                  \
    return false;                                                                          \
  }
  INFER_VK_TIMELINE_FNS(INFER_VK_LOAD_TIMELINE)
#undef INFER_VK_LOAD_TIMELINE
  return true;
}

const char* vk_result_name(VkResult result) {
  switch (result) {
#define INFER_VK_RESULT(r) \
  case r:                  \
    return #r;
    INFER_VK_RESULT(VK_SUCCESS)
    INFER_VK_RESULT(VK_NOT_READY)
    INFER_VK_RESULT(VK_TIMEOUT)
    INFER_VK_RESULT(VK_EVENT_SET)
    INFER_VK_RESULT(VK_EVENT_RESET)
    INFER_VK_RESULT(VK_INCOMPLETE)
    INFER_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    INFER_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    INFER_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    INFER_VK_RESULT(VK_ERROR_DEVICE_LOST)
    INFER_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    INFER_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    INFER_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    INFER_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    INFER_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    INFER_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    INFER_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    INFER_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    INFER_VK_RESULT(VK_ERROR_UNKNOWN)
    INFER_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    INFER_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    INFER_VK_RESULT(VK_ERROR_FRAGMENTATION)
#undef INFER_VK_RESULT
    default:
      return "VkResult(unknown)";
  }
}

}  // namespace infer::vk
