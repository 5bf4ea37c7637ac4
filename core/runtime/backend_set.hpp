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

// Discovers the plugins (SessionOptions::plugin_dirs in order, then $INFER_PLUGIN_PATH,
// then <exe>/../lib/infer/plugins) and creates one instance per name in `order`.
// Errors: a backend that cannot be found (NotFound, listing the folders searched), a
// plugin that fails to start, or one with zero devices: Unavailable,
// "backend 'vulkan' is unavailable: no Vulkan driver".
Result<std::vector<Backend>> open_backends(const std::vector<std::string>& order,
                                           const SessionOptions& options,
                                           const std::shared_ptr<tbb::task_arena>& arena,
                                           const Logger& log);

}  // namespace infer::runtime
