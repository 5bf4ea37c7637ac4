// Loads a plugin shared library the way the host does: dlopen, resolve the one exported
// entry point, call it with the host's ABI version, then create a plugin instance with a
// TestHost's services. Everything is undone in reverse order on destruction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "infer/plugin_api.h"
#include "infer/test_support/test_host.hpp"

namespace infer::test {

// Path of the plugin named `name` in the build tree (libinfer_plugin_<name>.so in the
// folder infer_add_plugin writes to).
std::string plugin_path(const std::string& name);

struct LoadOptions {
  uint32_t host_abi_major = INFER_ABI_VERSION_MAJOR;
  uint32_t host_abi_minor = INFER_ABI_VERSION_MINOR;
  // When false, only the library is opened and the entry point called (api() is set,
  // plugin() stays NULL): for tests of the version handshake itself.
  bool create_instance = true;
  size_t host_threads = 4;
};

class PluginHandle {
 public:
  // Returns nullptr and sets *error (when given) if any step fails: dlopen, missing
  // entry point, entry returning NULL, or plugin_create failing.
  static std::unique_ptr<PluginHandle> load(const std::string& path, std::string* error,
                                            const LoadOptions& options = {});
  ~PluginHandle();
  PluginHandle(const PluginHandle&) = delete;
  PluginHandle& operator=(const PluginHandle&) = delete;

  const infer_plugin_api* api() const { return api_; }
  infer_plugin* plugin() const { return plugin_; }
  TestHost& host() { return *host_; }
  const infer_host_services* services() const { return host_->services(); }

  // All devices the plugin reports (empty when it reports none).
  std::vector<infer_device*> devices() const;
  // Device `i`, or nullptr when there are fewer.
  infer_device* device(size_t i = 0) const;

 private:
  PluginHandle() = default;
  void* lib_ = nullptr;
  const infer_plugin_api* api_ = nullptr;
  infer_plugin* plugin_ = nullptr;
  std::unique_ptr<TestHost> host_;
};

}  // namespace infer::test
