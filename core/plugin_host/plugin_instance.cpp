#include "plugin_host/plugin_instance.hpp"

#include <new>

#include "plugin_host/status_bridge.hpp"

namespace infer::host {
namespace {

// A plugin claiming more devices than this is broken; refusing it beats allocating
// whatever a garbage count asks for.
constexpr size_t kMaxDevices = 4096;

template <size_t N>
std::string bounded_string(const char (&chars)[N]) {
  size_t n = 0;
  while (n < N && chars[n] != '\0') ++n;  // tolerate a plugin that forgot the NUL
  return std::string(chars, n);
}

}  // namespace

Result<std::shared_ptr<PluginInstance>> PluginInstance::create(
    std::shared_ptr<PluginLibrary> library, InstanceOptions options) {
  if (!library) return invalid_argument("PluginInstance::create: no plugin library given");
  try {
    std::shared_ptr<PluginInstance> self(new PluginInstance());
    self->library_ = std::move(library);
    const std::string& name = self->library_->name();
    const std::string ctx = "plugin '" + name + "'";
    self->services_ = std::make_unique<HostServices>(
        name, std::move(options.arena), std::move(options.options), std::move(options.log_sink),
        options.precision);
    const infer_plugin_api& api = self->api();

    infer_plugin* plugin = nullptr;
    INFER_RETURN_IF_ERROR(
        take_status(api.plugin_create(self->services_->table(), &plugin), ctx + ": plugin_create"));
    if (plugin == nullptr)
      return internal_error(ctx + ": plugin_create succeeded but returned no instance");
    self->plugin_ = plugin;

    // Two calls: the count first, then the handles. A failing or empty answer is the
    // "zero devices" case the ABI asks hosts to survive: the instance exists, unusable,
    // and remembers why.
    size_t count = 0;
    infer_status_code code = INFER_STATUS_OK;
    Status st = take_status(api.get_devices(plugin, nullptr, 0, &count), ctx, &code);
    if (st.is_ok() && count > kMaxDevices) {
      st = internal_error(ctx + ": get_devices reports " + std::to_string(count) +
                          " devices, more than the host accepts (" + std::to_string(kMaxDevices) +
                          ")");
    }
    if (st.is_ok() && count > 0) {
      std::vector<infer_device*> handles(count, nullptr);
      size_t second = 0;
      st =
          take_status(api.get_devices(plugin, handles.data(), handles.size(), &second), ctx, &code);
      if (st.is_ok()) {
        handles.resize(second < count ? second : count);
        for (infer_device* d : handles) {
          if (d == nullptr) {
            st = internal_error(ctx + ": get_devices returned a NULL device handle");
            break;
          }
        }
        if (st.is_ok()) self->devices_ = std::move(handles);
      }
    }
    if (!st.is_ok()) {
      if (code != INFER_STATUS_UNAVAILABLE) {
        self->services_->log(LogLevel::kWarning,
                             "get_devices failed with " + std::string(abi_code_name(code)) +
                                 "; treating the plugin as having no devices: " + st.message());
      }
      self->devices_.clear();
      self->unavailable_ = Status(StatusCode::kUnavailable, st.message());
    } else if (self->devices_.empty()) {
      self->unavailable_ =
          unavailable(ctx + ": the plugin reports no devices (and gave no reason)");
    }

    for (size_t i = 0; i < self->devices_.size(); ++i) {
      infer_device_props props{};
      props.struct_size = sizeof(props);
      INFER_RETURN_IF_ERROR(
          take_status(api.device_get_props(self->devices_[i], &props),
                      ctx + " device " + std::to_string(i) + ": device_get_props"));
      auto p = std::make_unique<DeviceProps>();
      p->name = bounded_string(props.name);
      p->vendor = bounded_string(props.vendor);
      p->kind = props.kind;
      p->memory_bytes = props.memory_bytes;
      p->compute_units = props.compute_units;
      p->host_addressable = props.host_addressable;
      self->props_.push_back(std::move(p));
    }
    return self;
  } catch (const std::bad_alloc&) {
    return unavailable("out of host memory while creating a plugin instance");
  }
}

PluginInstance::~PluginInstance() {
  // Every Device/Buffer/... holds a reference to this instance, so when this runs no
  // plugin object is left; the services table outlives plugin_destroy (member order).
  if (plugin_ != nullptr) api().plugin_destroy(plugin_);
}

std::vector<Device> PluginInstance::devices() const {
  std::vector<Device> out;
  out.reserve(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) out.push_back(device(i));
  return out;
}

Device PluginInstance::device(size_t index) const {
  if (index >= devices_.size()) return Device();
  return Device(shared_from_this(), devices_[index], index, props_[index].get());
}

}  // namespace infer::host
