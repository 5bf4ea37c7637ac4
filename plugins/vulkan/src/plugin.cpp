#include "plugin.hpp"

#include <algorithm>
#include <cstring>

namespace infer::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// Best first: what a user means by "the GPU".
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

}  // namespace

MaybeFailure Plugin::create(const infer_host_services* services, std::unique_ptr<Plugin>* out) {
  std::unique_ptr<Plugin> plugin(new Plugin(services));
  // Read once here so that a malformed option fails plugin_create with a clear message;
  // initialize() reads them again (options may be set until the first get_devices).
  if (MaybeFailure f = read_options(plugin->host_, &plugin->options_)) return f;
  *out = std::move(plugin);
  return std::nullopt;
}

Plugin::~Plugin() {
  // Devices first: they stop their scheduler threads and free everything they own.
  devices_.clear();
  if (messenger_ != VK_NULL_HANDLE)
    ifns_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE) ifns_.vkDestroyInstance(instance_, nullptr);
}

MaybeFailure Plugin::ensure_initialized() {
  std::call_once(init_once_, [this] { initialize(); });
  return init_failure_;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Plugin::debug_callback(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* plugin = static_cast<Plugin*>(user);
  const char* message = data && data->pMessage ? data->pMessage : "(no message)";
  // The loader reports through the same messenger ("Loader Message", GENERAL type), e.g.
  // about drivers it could not load. Those are facts about the machine, not misuse of
  // the API, so they are warnings; everything from the layer is a validation failure.
  const bool validation = (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)) != 0;
  if (validation) {
    plugin->host_.log(INFER_LOG_ERROR, std::string("vulkan validation: ") + message);
  } else {
    plugin->host_.log(severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? INFER_LOG_ERROR
                                                                                : INFER_LOG_WARNING,
                      std::string("vulkan: ") + message);
  }
  return VK_FALSE;  // never abort the call that triggered the message
}

bool Plugin::create_instance(std::string* error) {
  if (!load_vulkan_loader(&ifns_, error)) return false;

  uint32_t loader_version = VK_API_VERSION_1_0;
  if (ifns_.vkEnumerateInstanceVersion) ifns_.vkEnumerateInstanceVersion(&loader_version);
  if (loader_version < VK_API_VERSION_1_1) {
    *error = "the Vulkan loader only supports Vulkan 1.0 (1.1 is needed)";
    return false;
  }
  api_version_ = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;

  uint32_t n = 0;
  ifns_.vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  ifns_.vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  exts.resize(n);

  std::vector<const char*> layers, extensions;
  bool debug_utils = false;
  bool validation_features = false;
  if (options_.validation) {
    ifns_.vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> available(n);
    ifns_.vkEnumerateInstanceLayerProperties(&n, available.data());
    available.resize(n);
    bool found = std::any_of(available.begin(), available.end(), [](const VkLayerProperties& l) {
      return std::strcmp(l.layerName, kValidationLayer) == 0;
    });
    if (found) {
      layers.push_back(kValidationLayer);
      // Synchronization validation checks every barrier and semaphore of the runtime
      // against the accesses the shaders and copies make: missing barriers are the
      // classic compute-runtime bug that other checks and lavapipe's in-order execution
      // would hide.
      uint32_t m = 0;
      ifns_.vkEnumerateInstanceExtensionProperties(kValidationLayer, &m, nullptr);
      std::vector<VkExtensionProperties> layer_exts(m);
      ifns_.vkEnumerateInstanceExtensionProperties(kValidationLayer, &m, layer_exts.data());
      layer_exts.resize(m);
      if (has_extension(layer_exts, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
        extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
        validation_features = true;
      }
    } else {
      host_.log(INFER_LOG_WARNING, std::string("vulkan: validation was requested but the layer ") +
                                       kValidationLayer +
                                       " is not installed (Debian: vulkan-validationlayers); "
                                       "running without it");
    }
    if (has_extension(exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      debug_utils = true;
    } else {
      host_.log(INFER_LOG_WARNING,
                "vulkan: validation was requested but VK_EXT_debug_utils is missing: "
                "validation messages cannot be reported");
    }
  }
  VkInstanceCreateFlags flags = 0;
  // MoltenVK (and other non-conformant implementations) only enumerate with this.
  if (has_extension(exts, "VK_KHR_portability_enumeration")) {
    extensions.push_back("VK_KHR_portability_enumeration");
    flags |= 0x00000001;  // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "infer";
  app.pEngineName = "infer";
  app.apiVersion = api_version_;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = &Plugin::debug_callback;
  messenger_info.pUserData = this;

  const VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  features.pNext = debug_utils ? &messenger_info : nullptr;

  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  // The messenger is chained so that messages about instance creation itself are
  // reported too.
  info.pNext = validation_features ? static_cast<const void*>(&features)
                                   : debug_utils ? static_cast<const void*>(&messenger_info)
                                                 : nullptr;
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (VkResult r = ifns_.vkCreateInstance(&info, nullptr, &instance_); r != VK_SUCCESS) {
    instance_ = VK_NULL_HANDLE;
    *error = std::string("no Vulkan driver: vkCreateInstance failed: ") + vk_result_name(r);
    return false;
  }
  if (!load_instance_fns(instance_, debug_utils, &ifns_, error)) return false;
  if (!layers.empty())
    host_.log(INFER_LOG_INFO, std::string("vulkan: validation layer ") + kValidationLayer +
                                  " enabled");
  if (debug_utils) {
    if (VkResult r = ifns_.vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr,
                                                          &messenger_);
        r != VK_SUCCESS) {
      messenger_ = VK_NULL_HANDLE;
      host_.log(INFER_LOG_WARNING, std::string("vulkan: vkCreateDebugUtilsMessengerEXT failed: ") +
                                       vk_result_name(r));
    }
  }
  return true;
}

void Plugin::initialize() {
  if (MaybeFailure f = read_options(host_, &options_)) {
    init_failure_ = f;
    unavailable_reason_ = f->message;
    return;
  }
  std::string error;
  if (!create_instance(&error)) {
    unavailable_reason_ = "vulkan: " + error;
    host_.log(INFER_LOG_WARNING, unavailable_reason_ + "; the plugin reports zero devices");
    return;
  }
  uint32_t n = 0;
  ifns_.vkEnumeratePhysicalDevices(instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> physical(n);
  if (n > 0) ifns_.vkEnumeratePhysicalDevices(instance_, &n, physical.data());
  physical.resize(n);
  if (physical.empty()) {
    unavailable_reason_ = "vulkan: no Vulkan device: the loader found no driver with a device "
                          "(vkEnumeratePhysicalDevices returned 0)";
    host_.log(INFER_LOG_WARNING, unavailable_reason_ + "; the plugin reports zero devices");
    return;
  }
  // Sort best first; stable, so the driver's order breaks ties.
  std::vector<std::pair<int, VkPhysicalDevice>> ranked;
  for (VkPhysicalDevice pd : physical) {
    VkPhysicalDeviceProperties props{};
    ifns_.vkGetPhysicalDeviceProperties(pd, &props);
    ranked.emplace_back(type_rank(props.deviceType), pd);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });

  std::string reasons;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (options_.device_index >= 0 && static_cast<int64_t>(i) != options_.device_index) continue;
    std::unique_ptr<Device> device;
    if (MaybeFailure f = Device::create(*this, ranked[i].second, &device)) {
      host_.log(INFER_LOG_WARNING, f->message);
      reasons += (reasons.empty() ? "" : "; ") + f->message;
      continue;
    }
    host_.log(INFER_LOG_INFO, "vulkan: device " + std::to_string(devices_.size()) + ": " +
                                  device->name());
    devices_.push_back(std::move(device));
  }
  if (devices_.empty()) {
    if (options_.device_index >= static_cast<int64_t>(ranked.size()))
      unavailable_reason_ = "vulkan: option device=" + std::to_string(options_.device_index) +
                            " but there are only " + std::to_string(ranked.size()) +
                            " Vulkan devices";
    else
      unavailable_reason_ = "vulkan: no usable Vulkan device: " + reasons;
    host_.log(INFER_LOG_WARNING, unavailable_reason_ + "; the plugin reports zero devices");
  }
}

}  // namespace infer::vk
