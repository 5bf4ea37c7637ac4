#include "runtime/backend_set.hpp"

#include <algorithm>

#include "partitioner/partitioner.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace infer::runtime {
namespace {

host::OptionList options_for(const SessionOptions& options, const std::string& backend) {
  host::OptionList out;
  for (const BackendOptions& b : options.backend_options)
    if (b.backend == backend) out.insert(out.end(), b.options.begin(), b.options.end());
  return out;
}

}  // namespace

Result<std::vector<Backend>> open_backends(const std::vector<std::string>& order,
                                           const SessionOptions& options,
                                           const std::shared_ptr<tbb::task_arena>& arena,
                                           const Logger& log,
                                           std::vector<SkippedBackend>* skipped) {
  for (const BackendOptions& b : options.backend_options)
    if (std::find(order.begin(), order.end(), b.backend) == order.end())
      log.log(LogLevel::kWarning, "options given for backend '" + b.backend +
                                      "', which is not among the session's backends");

  host::DiscoveryOptions discovery;
  discovery.search_dirs = options.plugin_dirs;
  discovery.log_sink = log.as_sink();
  host::PluginRegistry registry(discovery);

  const bool cpu_listed = std::find(options.backends.begin(), options.backends.end(),
                                    partitioner::kFallbackBackend) != options.backends.end();
  std::vector<Backend> backends;
  std::vector<SkippedBackend> without_device;
  for (const std::string& name : order) {
    Backend b;
    b.name = name;
    b.implicit_fallback = name == partitioner::kFallbackBackend && !cpu_listed;
    Result<std::shared_ptr<host::PluginLibrary>> library = registry.find(name);
    if (!library.is_ok()) {
      if (b.implicit_fallback)
        return library.status().with_context("the cpu backend (the implicit fallback) is required");
      return library.status();
    }
    host::InstanceOptions instance_options;
    instance_options.arena = arena;
    instance_options.options = options_for(options, name);
    instance_options.log_sink = log.as_sink();
    instance_options.precision = static_cast<infer_precision>(options.precision);
    Result<std::shared_ptr<host::PluginInstance>> instance =
        host::PluginInstance::create(*library, instance_options);
    if (!instance.is_ok()) return instance.status().with_context("backend '" + name + "'");
    b.instance = *instance;
    if (b.instance->device_count() == 0) {
      without_device.push_back({name, b.instance->unavailable_text()});
      continue;
    }
    b.device = b.instance->device(0);
    b.mappable = b.device.props().host_addressable && b.instance->api().buffer_map != nullptr;
    log.log(LogLevel::kDebug, "backend '" + name + "': " + b.device.describe() + " from " +
                                  b.instance->library().path());
    backends.push_back(std::move(b));
  }
  if (!without_device.empty()) {
    // Only the implicit cpu fallback left: the user's own choice has no device at all,
    // which is an error rather than a quiet run on cpu.
    const bool listed_left = std::any_of(backends.begin(), backends.end(),
                                         [](const Backend& b) { return !b.implicit_fallback; });
    if (!listed_left)
      return unavailable("backend '" + without_device[0].name +
                         "' is unavailable: " + without_device[0].reason);
    for (const SkippedBackend& s : without_device)
      log.log(LogLevel::kWarning, "backend '" + s.name + "' is unavailable (" + s.reason +
                                      "): its nodes go to the next backends");
    if (skipped != nullptr) *skipped = std::move(without_device);
  }
  return backends;
}

}  // namespace infer::runtime
