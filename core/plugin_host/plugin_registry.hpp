// Plugin discovery: which libinfer_plugin_<name>.so files exist, in which order they are
// searched, and which one serves a backend name.
//
// Search order (first valid plugin of a name wins; later ones are shadowed):
//   (a) --plugin-dir folders and (b) the YAML plugins.search_paths, passed by the caller
//       as one ordered list;
//   (c) each entry of $INFER_PLUGIN_PATH (colon-separated), when use_env_path;
//   (d) <dir of /proc/self/exe>/../lib/infer/plugins, when use_install_dir.
// Within a folder, candidates are taken in file-name order. Files are only dlopen'ed
// when a name is looked up (or available() is asked), so a broken or heavy plugin that
// nobody asks for is never loaded.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "infer/infer.hpp"
#include "plugin_host/plugin_library.hpp"

namespace infer::host {

struct DiscoveryOptions {
  // (a) then (b): the caller's folders, in order.
  std::vector<std::string> search_dirs;
  bool use_env_path = true;     // (c) $INFER_PLUGIN_PATH
  bool use_install_dir = true;  // (d) next to the executable
  // Receives rejections (warning), skipped folders and shadowed plugins (debug).
  // Empty: warnings and errors go to stderr.
  LogSink log_sink;
  HostVersion host_version;
};

// A file that looked like a plugin but was refused.
struct RejectedCandidate {
  std::string path;
  std::string name;  // from the file name
  RejectReason reason = RejectReason::kNone;
  std::string message;  // the full reason, e.g. "wrong ABI major: built for ..."
};

class PluginRegistry {
 public:
  // Lists the candidates of every search folder (missing or empty folders are skipped
  // with a debug log). Never fails.
  explicit PluginRegistry(DiscoveryOptions options);
  ~PluginRegistry();
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // The first valid plugin called `name`, loaded on first use and cached. NotFound when
  // there is none, with a message listing the folders searched and the rejected
  // candidates of that name: "no plugin 'vulkan' found (searched: /a, /b; rejected:
  // /a/libinfer_plugin_vulkan.so: wrong ABI major: ...)". Thread-safe.
  Result<std::shared_ptr<PluginLibrary>> find(const std::string& name);

  // Names of all valid plugins (loads every candidate once), sorted.
  std::vector<std::string> available();

  // The folders searched, in order, after expanding the env variable and install dir
  // (including folders that turned out missing).
  const std::vector<std::string>& searched_dirs() const { return dirs_; }
  // Candidate file paths in search order, for every name.
  std::vector<std::string> candidates() const;
  // Every candidate refused so far (by find/available), in the order they were tried.
  std::vector<RejectedCandidate> rejected() const;

  // The install location (d) for the running executable: "<exe dir>/../lib/infer/plugins"
  // (normalized), or "" when /proc/self/exe cannot be read.
  static std::string install_dir();
  // The entries of $INFER_PLUGIN_PATH, empty entries dropped.
  static std::vector<std::string> env_dirs();

 private:
  struct Candidate {
    std::string path;
    std::string name;
  };
  Result<std::shared_ptr<PluginLibrary>> find_locked(const std::string& name);
  void log(LogLevel level, const std::string& message) const;

  DiscoveryOptions options_;
  std::vector<std::string> dirs_;
  std::vector<Candidate> candidates_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<PluginLibrary>> loaded_;
  std::map<std::string, Status> failed_;  // names already looked up without success
  std::vector<RejectedCandidate> rejected_;
};

}  // namespace infer::host
