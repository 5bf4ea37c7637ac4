// The session's backends: each plugin found, created with its options on the session's
// oneTBB arena, and its device 0.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "plugin_host/plugin_instance.hpp"
#include "runtime/logger.hpp"

namespace infer::runtime {

struct Backend {
  std::string name;
  bool implicit_fallback = false;  // "cpu" appended by the runtime, not listed by the user
  std::shared_ptr<host::PluginInstance> instance;
  host::Device device;  // device 0
  // Host-addressable and mappable: the host reads and writes its buffers directly.
  bool mappable = false;
};

// A listed backend left out because its plugin has no device.
struct SkippedBackend {
  std::string name;
  std::string reason;  // the plugin's, without its "plugin 'x': " prefix
};

// Discovers the plugins (SessionOptions::plugin_dirs in order, then $INFER_PLUGIN_PATH,
// then <exe>/../lib/infer/plugins) and creates one instance per name in `order`.
// A listed backend whose plugin reports zero devices is left out, with one warning
// naming it and the plugin's reason, when another listed backend has a device (its nodes
// go to the next backends, as for `--backends cuda,cpu` on a machine without a GPU);
// `skipped`, when given, receives those. Errors: a backend that cannot be found
// (NotFound, listing the folders searched), a plugin that fails to start, or, when no
// listed backend has a device, Unavailable for the first one:
// "backend 'vulkan' is unavailable: no Vulkan driver".
Result<std::vector<Backend>> open_backends(const std::vector<std::string>& order,
                                           const SessionOptions& options,
                                           const std::shared_ptr<tbb::task_arena>& arena,
                                           const Logger& log,
                                           std::vector<SkippedBackend>* skipped = nullptr);

}  // namespace infer::runtime
