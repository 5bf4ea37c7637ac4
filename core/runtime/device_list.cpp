// infer::list_devices (infer.hpp): discovery, then one plugin instance per name to read
// its devices.
#include <utility>

#include "infer/infer.hpp"
#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace infer {
namespace {

const char* kind_name(infer_device_kind kind) {
  switch (kind) {
    case INFER_DEVICE_CPU:
      return "cpu";
    case INFER_DEVICE_GPU:
      return "gpu";
    case INFER_DEVICE_ACCELERATOR:
      return "accelerator";
    default:
      return "unknown";
  }
}

}  // namespace

std::vector<BackendDevices> list_devices(const std::vector<std::string>& plugin_dirs,
                                         const LogSink& log_sink) {
  host::DiscoveryOptions discovery;
  discovery.search_dirs = plugin_dirs;
  discovery.log_sink = log_sink;
  host::PluginRegistry registry(std::move(discovery));
  std::vector<BackendDevices> out;
  for (const std::string& name : registry.available()) {
    Result<std::shared_ptr<host::PluginLibrary>> library = registry.find(name);
    if (!library.is_ok()) continue;  // available() just loaded it; kept for safety
    BackendDevices entry;
    entry.backend = name;
    entry.plugin_path = (*library)->path();
    entry.version = (*library)->version();
    entry.description = (*library)->description();
    host::InstanceOptions options;
    options.log_sink = log_sink;
    Result<std::shared_ptr<host::PluginInstance>> instance =
        host::PluginInstance::create(*library, std::move(options));
    if (!instance.is_ok()) {
      entry.unavailable = instance.status().message();
    } else if ((*instance)->device_count() == 0) {
      entry.unavailable = (*instance)->unavailable_text();  // the entry names the plugin
    } else {
      for (const host::Device& device : (*instance)->devices()) {
        const host::DeviceProps& p = device.props();
        DeviceInfo info;
        info.index = device.index();
        info.name = p.name;
        info.vendor = p.vendor;
        info.kind = kind_name(p.kind);
        info.memory_bytes = p.memory_bytes;
        info.compute_units = p.compute_units;
        info.host_addressable = p.host_addressable;
        entry.devices.push_back(std::move(info));
      }
    }
    out.push_back(std::move(entry));
  }
  for (const host::RejectedCandidate& rejected : registry.rejected()) {
    BackendDevices entry;
    entry.backend = rejected.name;
    entry.plugin_path = rejected.path;
    entry.unavailable = rejected.message;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace infer
