// One created plugin instance (plugin_create .. plugin_destroy) with its host services
// and its devices.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "infer/plugin_api.h"
#include "infer/status.hpp"
#include "plugin_host/device.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_library.hpp"

namespace infer::host {

struct InstanceOptions {
  // The runtime's oneTBB arena; NULL: a default arena.
  std::shared_ptr<tbb::task_arena> arena;
  // The YAML backends.<name>.options pairs.
  OptionList options;
  // Receives the plugin's log lines prefixed with its name (the sink filters levels).
  LogSink log_sink;
  // The session's compute precision (infer_host_services.compute_precision).
  infer_precision precision = INFER_PRECISION_FP32;
};

// Always held by shared_ptr: every Device, Buffer, Stream, Event and Executable keeps
// its instance (and through it the library) alive, so plugin objects are always
// destroyed before plugin_destroy, and the library is unloaded last. Not copyable or
// movable (the host services table points into it).
class PluginInstance : public std::enable_shared_from_this<PluginInstance> {
 public:
  // Calls plugin_create with a new HostServices, then get_devices and device_get_props
  // for each device. A plugin reporting zero devices is not an error: the instance has
  // no devices and unavailable_reason() says why. Fails only when plugin_create fails
  // (or a device's properties cannot be read).
  static Result<std::shared_ptr<PluginInstance>> create(std::shared_ptr<PluginLibrary> library,
                                                        InstanceOptions options = {});
  ~PluginInstance();
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  const std::string& name() const { return library_->name(); }
  const PluginLibrary& library() const { return *library_; }
  const std::shared_ptr<PluginLibrary>& shared_library() const { return library_; }
  const infer_plugin_api& api() const { return library_->api(); }
  const HostServices& services() const { return *services_; }
  infer_plugin* raw() const { return plugin_; }

  size_t device_count() const { return devices_.size(); }
  // Handles to the devices, in the plugin's order.
  std::vector<Device> devices() const;
  Device device(size_t index) const;  // index < device_count()
  // OK when there is at least one device; otherwise the plugin's UNAVAILABLE reason
  // ("plugin 'vulkan': no Vulkan driver: ...").
  const Status& unavailable_reason() const { return unavailable_; }
  // The same reason without its "plugin 'vulkan': " prefix, for messages that already
  // name the backend ("no Vulkan driver: ...").
  std::string unavailable_text() const {
    const std::string& m = unavailable_.message();
    const std::string prefix = "plugin '" + name() + "': ";
    return m.rfind(prefix, 0) == 0 ? m.substr(prefix.size()) : m;
  }

 private:
  PluginInstance() = default;

  std::shared_ptr<PluginLibrary> library_;
  std::unique_ptr<HostServices> services_;  // destroyed after plugin_destroy
  infer_plugin* plugin_ = nullptr;
  std::vector<infer_device*> devices_;
  std::vector<std::unique_ptr<DeviceProps>> props_;
  Status unavailable_;
};

}  // namespace infer::host
