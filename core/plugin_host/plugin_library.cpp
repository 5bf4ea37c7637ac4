#include "plugin_host/plugin_library.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <new>

namespace infer::host {
namespace {

constexpr std::string_view kPrefix = "libinfer_plugin_";
constexpr std::string_view kSuffix = ".so";

// A table claiming more than this is garbage, not a newer minor: the ABI only appends
// function pointers and a few flag words, and no minor will ever add thousands of them.
constexpr size_t kMaxTableSize = size_t{1} << 20;

// The smallest table the host can read anything from: up to and including
// min_host_minor, so that it can tell "wrong version" from "broken".
constexpr size_t kMinTableSize = offsetof(infer_plugin_api, min_host_minor) + sizeof(uint32_t);

// Every function pointer field, in declaration order, with whether the host requires it.
// Fields are zeroed in the host's copy unless the plugin's struct_size covers them whole.
#define INFER_PLUGIN_API_FIELDS(X) \
  X(plugin_create, true)           \
  X(plugin_destroy, true)          \
  X(get_devices, true)             \
  X(device_get_props, true)        \
  X(query_capability, true)        \
  X(propose_groups, false)         \
  X(buffer_alloc, true)            \
  X(buffer_free, true)             \
  X(buffer_import_host, false)     \
  X(buffer_map, false)             \
  X(stream_create, true)           \
  X(stream_destroy, true)          \
  X(event_create, true)            \
  X(event_destroy, true)           \
  X(stream_signal, true)           \
  X(stream_wait, true)             \
  X(event_signal_host, false)      \
  X(event_wait, true)              \
  X(event_query, false)            \
  X(event_on_complete, false)      \
  X(copy_batch, true)              \
  X(copy_cost, false)              \
  X(compile, true)                 \
  X(executable_destroy, true)      \
  X(execute, true)                 \
  X(prepack_constant, false)

struct Refusal {
  RejectReason reason;
  std::string message;
};

}  // namespace

const char* reject_reason_name(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNone:
      return "none";
    case RejectReason::kBadFileName:
      return "bad file name";
    case RejectReason::kDlopenFailed:
      return "dlopen failed";
    case RejectReason::kNoEntrySymbol:
      return "not a plugin";
    case RejectReason::kEntryReturnedNull:
      return "entry point returned NULL";
    case RejectReason::kBadTable:
      return "invalid function table";
    case RejectReason::kWrongAbiMajor:
      return "wrong ABI major";
    case RejectReason::kNeedsNewerMinor:
      return "requires a newer ABI minor";
    case RejectReason::kMissingEntry:
      return "missing required entry";
    case RejectReason::kNameMismatch:
      return "name mismatch";
  }
  return "unknown";
}

std::string PluginLibrary::name_from_file_name(const std::string& path) {
  std::string file = std::filesystem::path(path).filename().string();
  if (file.size() <= kPrefix.size() + kSuffix.size()) return "";
  if (file.compare(0, kPrefix.size(), kPrefix) != 0) return "";
  if (file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return "";
  return file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size());
}

PluginLibrary::~PluginLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<std::shared_ptr<PluginLibrary>> PluginLibrary::open(const std::string& path,
                                                           HostVersion host, RejectReason* reason) {
  auto refuse = [&](RejectReason why, const std::string& message) -> Status {
    if (reason != nullptr) *reason = why;
    StatusCode code = (why == RejectReason::kWrongAbiMajor || why == RejectReason::kNeedsNewerMinor)
                          ? StatusCode::kUnavailable
                          : StatusCode::kInvalidArgument;
    return Status(code, "plugin '" + path + "': " + message);
  };
  if (reason != nullptr) *reason = RejectReason::kNone;

  try {
    std::string file_name = name_from_file_name(path);
    if (file_name.empty()) {
      return refuse(RejectReason::kBadFileName, "file name is not libinfer_plugin_<name>.so");
    }

    std::shared_ptr<PluginLibrary> lib(new PluginLibrary());
    lib->path_ = path;
    dlerror();  // clear a stale error so the message below is this call's
    // RTLD_LOCAL keeps each plugin's symbols to itself; RTLD_NOW surfaces missing
    // symbols here, as a clear refusal, instead of as a crash at the first call.
    lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib->handle_ == nullptr) {
      const char* err = dlerror();
      return refuse(RejectReason::kDlopenFailed,
                    std::string("dlopen failed: ") + (err ? err : "unknown error"));
    }
    dlerror();
    void* sym = dlsym(lib->handle_, INFER_PLUGIN_ENTRY_SYMBOL);
    if (sym == nullptr) {
      return refuse(RejectReason::kNoEntrySymbol, "not a plugin (no infer_plugin_entry symbol)");
    }
    auto entry = reinterpret_cast<infer_plugin_entry_fn>(sym);
    const infer_plugin_api* table = entry(host.major, host.minor);
    if (table == nullptr) {
      return refuse(RejectReason::kEntryReturnedNull,
                    "entry point returned NULL (the plugin cannot work with host ABI " +
                        std::to_string(host.major) + "." + std::to_string(host.minor) + ")");
    }

    const size_t size = table->struct_size;
    if (size < kMinTableSize) {
      return refuse(RejectReason::kBadTable, "invalid function table: struct_size " +
                                                 std::to_string(size) +
                                                 " is smaller than the table header (" +
                                                 std::to_string(kMinTableSize) + " bytes)");
    }
    if (size > kMaxTableSize) {
      return refuse(RejectReason::kBadTable, "invalid function table: struct_size " +
                                                 std::to_string(size) + " is implausibly large");
    }
    if (table->abi_major != host.major) {
      return refuse(RejectReason::kWrongAbiMajor,
                    "wrong ABI major: built for ABI major " + std::to_string(table->abi_major) +
                        ", host speaks " + std::to_string(host.major));
    }
    if (table->min_host_minor > host.minor) {
      return refuse(RejectReason::kNeedsNewerMinor,
                    "requires a newer ABI minor: requires ABI minor " +
                        std::to_string(table->min_host_minor) + ", host has " +
                        std::to_string(host.minor));
    }

    // Read only what the plugin wrote; everything past it stays zero (absent). A field
    // only partly covered by struct_size is absent too (INFER_HAS_FIELD's rule).
    const size_t copy = size < sizeof(infer_plugin_api) ? size : sizeof(infer_plugin_api);
    std::memcpy(&lib->api_, table, copy);
    lib->table_size_ = size;
    lib->api_.struct_size = copy;
    auto covers = [size](size_t offset, size_t bytes) { return size >= offset + bytes; };
    if (!covers(offsetof(infer_plugin_api, name), sizeof(const char*))) lib->api_.name = nullptr;
    if (!covers(offsetof(infer_plugin_api, version), sizeof(const char*)))
      lib->api_.version = nullptr;
    if (!covers(offsetof(infer_plugin_api, description), sizeof(const char*)))
      lib->api_.description = nullptr;
    std::string missing;
#define INFER_CHECK_FIELD(field, required)                                 \
  if (!covers(offsetof(infer_plugin_api, field), sizeof(lib->api_.field))) \
    lib->api_.field = nullptr;                                             \
  if ((required) && lib->api_.field == nullptr)                            \
    missing += (missing.empty() ? "" : ", ") + std::string(#field);
    INFER_PLUGIN_API_FIELDS(INFER_CHECK_FIELD)
#undef INFER_CHECK_FIELD
    if (!covers(offsetof(infer_plugin_api, prepack_flags), sizeof(uint64_t)))
      lib->api_.prepack_flags = 0;  // minor 1 and older: no flags

    if (lib->api_.name == nullptr || lib->api_.name[0] == '\0') {
      return refuse(RejectReason::kBadTable, "invalid function table: no plugin name");
    }
    lib->name_ = lib->api_.name;
    if (lib->name_ != file_name) {
      return refuse(RejectReason::kNameMismatch, "name mismatch: the table says '" + lib->name_ +
                                                     "', the file name says '" + file_name + "'");
    }
    if (!missing.empty()) {
      return refuse(RejectReason::kMissingEntry, "missing required entry (NULL): " + missing);
    }
    lib->version_ = lib->api_.version ? lib->api_.version : "";
    lib->description_ = lib->api_.description ? lib->api_.description : "";
    return lib;
  } catch (const std::bad_alloc&) {
    return refuse(RejectReason::kNone, "out of memory while loading");
  }
}

}  // namespace infer::host
