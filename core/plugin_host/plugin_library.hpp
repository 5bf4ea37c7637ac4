// One loaded plugin shared library: the dlopen handle and a validated host-side copy of
// the plugin's function table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "infer/plugin_api.h"
#include "infer/status.hpp"

namespace infer::host {

// The ABI version the host speaks; tests may pretend to be another host.
struct HostVersion {
  uint32_t major = INFER_ABI_VERSION_MAJOR;
  uint32_t minor = INFER_ABI_VERSION_MINOR;
};

// Why a candidate file was refused. The message of the Status returned by
// PluginLibrary::open is "plugin '<path>': " followed by the matching phrase:
enum class RejectReason {
  kNone,
  kBadFileName,        // "file name is not libinfer_plugin_<name>.so"
  kDlopenFailed,       // "dlopen failed: <dlerror>"
  kNoEntrySymbol,      // "not a plugin (no infer_plugin_entry symbol)"
  kEntryReturnedNull,  // "entry point returned NULL"
  kBadTable,           // "invalid function table: ..." (struct_size too small, no name)
  kWrongAbiMajor,      // "wrong ABI major: built for ABI major 1, host speaks 0"
  kNeedsNewerMinor,    // "requires a newer ABI minor: requires ABI minor 3, host has 1"
  kMissingEntry,       // "missing required entry (NULL): <field>, <field>"
  kNameMismatch,       // "name mismatch: the table says 'x', the file name says 'y'"
};
const char* reject_reason_name(RejectReason reason);

// The entries a plugin must provide; every other function pointer is optional and has a
// host fallback (see device.hpp and friends):
//   plugin_create, plugin_destroy, get_devices, device_get_props, query_capability,
//   buffer_alloc, buffer_free, stream_create, stream_destroy, event_create,
//   event_destroy, stream_signal, stream_wait, event_wait, copy_batch, compile,
//   executable_destroy, execute.
// Optional: propose_groups, buffer_import_host, buffer_map, event_signal_host,
// event_query, event_on_complete, copy_cost, prepack_constant.
//
// All required entries lie within ABI minor 0's table, so a plugin built against any
// minor of major 0 can satisfy them.

// A loaded, validated plugin library. Shared (every object created through it keeps it
// loaded): the library is dlclose'd when the last reference goes.
class PluginLibrary {
 public:
  // dlopens `path` (RTLD_NOW | RTLD_LOCAL), resolves infer_plugin_entry, calls it with
  // the host version and validates the table. The file name must be
  // libinfer_plugin_<name>.so and the table's name must equal <name>. Never throws; a
  // refused file comes back as an error "plugin '<path>': <phrase of its RejectReason>"
  // (see above); `reason`, when given, receives the classification.
  static Result<std::shared_ptr<PluginLibrary>> open(const std::string& path, HostVersion host = {},
                                                     RejectReason* reason = nullptr);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::string& path() const { return path_; }
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  uint32_t abi_major() const { return api_.abi_major; }
  uint32_t abi_minor() const { return api_.abi_minor; }
  // The plugin's own struct_size (smaller than sizeof(infer_plugin_api) for a plugin
  // built against an older minor).
  size_t table_size() const { return table_size_; }
  // The host-side copy of the table: full size, zero-filled beyond table_size(), so a
  // field the plugin's ABI minor did not know reads as NULL. Always read through this.
  const infer_plugin_api& api() const { return api_; }

  // The <name> of libinfer_plugin_<name>.so, or "" when `path` does not follow the
  // pattern.
  static std::string name_from_file_name(const std::string& path);

 private:
  PluginLibrary() = default;

  void* handle_ = nullptr;
  std::string path_;
  std::string name_;
  std::string version_;
  std::string description_;
  size_t table_size_ = 0;
  infer_plugin_api api_{};
};

}  // namespace infer::host
