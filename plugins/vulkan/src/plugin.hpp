// The infer_plugin object: the host services, the options, the VkInstance (with the
// validation layer's messenger when asked) and the devices.
//
// Vulkan is initialized on the first call that needs devices (get_devices), not in
// plugin_create: creating an instance loads every installed driver, which is slow and
// pointless for a host that only lists plugins, and options set up to that point are
// honoured. Nothing here ever aborts: without a loader, a driver or a usable device the
// plugin reports zero devices and keeps the reason (unavailable_reason()), which is also
// logged.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device.hpp"
#include "failure.hpp"
#include "options.hpp"
#include "vk_api.hpp"

namespace infer::vk {

class Plugin {
 public:
  static MaybeFailure create(const infer_host_services* services, std::unique_ptr<Plugin>* out);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const sdk::Host& host() const { return host_; }
  const Options& options() const { return options_; }
  const InstanceFns& ifns() const { return ifns_; }
  VkInstance instance() const { return instance_; }
  // The Vulkan version the instance was created for (VK_API_VERSION_1_1 or _1_2).
  uint32_t api_version() const { return api_version_; }

  // Initializes Vulkan once (see above). Then: the usable devices, best first, or none
  // with the reason. A bad option fails here too.
  MaybeFailure ensure_initialized();
  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  const std::string& unavailable_reason() const { return unavailable_reason_; }

 private:
  explicit Plugin(const infer_host_services* services) : host_(services) {}
  // Creates the instance and opens the devices; sets unavailable_reason_ when none.
  void initialize();
  bool create_instance(std::string* error);
  static VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(
      VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
      const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  sdk::Host host_;
  Options options_;
  std::once_flag init_once_;
  MaybeFailure init_failure_;
  InstanceFns ifns_{};
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = VK_API_VERSION_1_1;
  std::vector<std::unique_ptr<Device>> devices_;
  std::string unavailable_reason_;
};

}  // namespace infer::vk
