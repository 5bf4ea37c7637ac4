// The host services table one plugin instance receives (infer_host_services): logging,
// statuses, parallelism over the host's oneTBB arena, aligned host memory, the backend's
// options and the cancellation check.
#pragma once

#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "infer/infer.hpp"
#include "infer/plugin_api.h"
#include "plugin_host/run_context.hpp"

namespace infer::host {

using OptionList = std::vector<std::pair<std::string, std::string>>;

// One per plugin instance. The table's host_ctx points at this object, so it can be
// neither copied nor moved; PluginInstance keeps it alive until after plugin_destroy
// has returned (the ABI requires the table to stay valid until then).
class HostServices {
 public:
  // `plugin_name` prefixes every log line ("[cpu] message"). `arena` is the oneTBB arena
  // shared with the runtime; when NULL a default arena (one slot per hardware thread) is
  // created. `options` are the backend's `backends.<name>.options` pairs; the first
  // entry of a key wins. `log_sink` receives every message with its level (the sink
  // filters); when empty, warnings and errors go to stderr.
  // `precision` is the session's compute_precision handed to the plugin.
  HostServices(std::string plugin_name, std::shared_ptr<tbb::task_arena> arena,
               OptionList options = {}, LogSink log_sink = {},
               infer_precision precision = INFER_PRECISION_FP32);
  ~HostServices();
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;

  // The table to hand to plugin_create: valid as long as this object.
  const infer_host_services* table() const;

  const std::string& plugin_name() const;
  tbb::task_arena& arena() const;
  const std::shared_ptr<tbb::task_arena>& shared_arena() const;
  const OptionList& options() const;

  // The same services for host code (used by the wrappers, e.g. for log lines about
  // this plugin, and by tests).
  void log(LogLevel level, const std::string& message) const;
  // nullopt when the option is not set.
  std::optional<std::string> option(const std::string& key) const;

  // Implementation detail (public only so the C service functions can name it).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Converts between the ABI's and the core's log levels.
LogLevel to_log_level(infer_log_level level);
infer_log_level to_abi_log_level(LogLevel level);

}  // namespace infer::host
