#include "plugin_host/plugin_registry.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <system_error>

namespace infer::host {
namespace fs = std::filesystem;

namespace {

std::string normalized(const std::string& dir) {
  fs::path p(dir);
  std::string s = p.lexically_normal().string();
  // "a/b/" normalizes to "a/b/": drop the trailing separator so equal folders compare equal.
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

std::vector<std::string> PluginRegistry::env_dirs() {
  std::vector<std::string> out;
  const char* env = std::getenv("INFER_PLUGIN_PATH");
  if (env == nullptr) return out;
  std::string value(env);
  size_t start = 0;
  while (start <= value.size()) {
    size_t colon = value.find(':', start);
    if (colon == std::string::npos) colon = value.size();
    if (colon > start) out.push_back(value.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::string PluginRegistry::install_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return "";
  return normalized((exe.parent_path() / ".." / "lib" / "infer" / "plugins").string());
}

PluginRegistry::PluginRegistry(DiscoveryOptions options) : options_(std::move(options)) {
  std::vector<std::string> wanted = options_.search_dirs;
  if (options_.use_env_path) {
    for (auto& d : env_dirs()) wanted.push_back(std::move(d));
  }
  if (options_.use_install_dir) {
    std::string d = install_dir();
    if (!d.empty()) wanted.push_back(std::move(d));
  }
  // A folder listed twice is searched once, at its first position: a second visit could
  // only shadow plugins with themselves.
  std::set<std::string> seen;
  for (const auto& raw : wanted) {
    if (raw.empty()) continue;
    std::string dir = normalized(raw);
    if (!seen.insert(dir).second) continue;
    dirs_.push_back(dir);
  }

  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      log(LogLevel::kDebug, "plugin folder '" + dir + "' does not exist; skipped");
      continue;
    }
    std::vector<Candidate> here;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      log(LogLevel::kDebug,
          "plugin folder '" + dir + "' cannot be read (" + ec.message() + "); skipped");
      continue;
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      std::string name = PluginLibrary::name_from_file_name(it->path().string());
      if (name.empty()) continue;
      std::error_code type_ec;
      if (fs::is_directory(it->path(), type_ec)) continue;
      here.push_back(Candidate{(fs::path(dir) / it->path().filename()).string(), name});
    }
    if (here.empty()) {
      log(LogLevel::kDebug, "plugin folder '" + dir + "' holds no libinfer_plugin_*.so");
      continue;
    }
    std::sort(here.begin(), here.end(),
              [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
    candidates_.insert(candidates_.end(), here.begin(), here.end());
  }
}

PluginRegistry::~PluginRegistry() = default;

void PluginRegistry::log(LogLevel level, const std::string& message) const {
  if (options_.log_sink) {
    try {
      options_.log_sink(level, message);
    } catch (...) {
      // A failing sink must not break discovery.
    }
  } else if (level >= LogLevel::kWarning) {
    std::cerr << message << "\n";
  }
}

Result<std::shared_ptr<PluginLibrary>> PluginRegistry::find(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  return find_locked(name);
}

Result<std::shared_ptr<PluginLibrary>> PluginRegistry::find_locked(const std::string& name) {
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second;
  if (auto it = failed_.find(name); it != failed_.end()) return it->second;

  std::shared_ptr<PluginLibrary> winner;
  std::vector<size_t> rejected_index;
  for (const auto& c : candidates_) {
    if (c.name != name) continue;
    if (winner) {
      log(LogLevel::kDebug,
          "plugin '" + name + "' at " + c.path + " is shadowed by " + winner->path());
      continue;
    }
    RejectReason reason = RejectReason::kNone;
    auto lib = PluginLibrary::open(c.path, options_.host_version, &reason);
    if (lib.is_ok()) {
      winner = std::move(lib).value();
      log(LogLevel::kDebug, "plugin '" + name + "' loaded from " + c.path);
      continue;
    }
    // open() prefixes "plugin '<path>': "; the record keeps the reason alone.
    std::string message = lib.status().message();
    std::string prefix = "plugin '" + c.path + "': ";
    if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
    log(LogLevel::kWarning, "rejected plugin candidate " + c.path + ": " + message);
    rejected_.push_back(RejectedCandidate{c.path, c.name, reason, message});
    rejected_index.push_back(rejected_.size() - 1);
  }
  if (winner) {
    loaded_[name] = winner;
    return winner;
  }

  std::string msg = "no plugin '" + name + "' found (searched: ";
  if (dirs_.empty()) {
    msg += "no folders";
  } else {
    for (size_t i = 0; i < dirs_.size(); ++i) msg += (i ? ", " : "") + dirs_[i];
  }
  if (!rejected_index.empty()) {
    msg += "; rejected: ";
    for (size_t i = 0; i < rejected_index.size(); ++i) {
      const RejectedCandidate& r = rejected_[rejected_index[i]];
      msg += (i ? "; " : "") + r.path + ": " + r.message;
    }
  }
  msg += ")";
  Status status = not_found(msg);
  failed_[name] = status;
  return status;
}

std::vector<std::string> PluginRegistry::available() {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> names;
  for (const auto& c : candidates_) names.insert(c.name);
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (find_locked(n).is_ok()) out.push_back(n);
  }
  return out;  // std::set iteration order: already sorted
}

std::vector<std::string> PluginRegistry::candidates() const {
  std::vector<std::string> out;
  for (const auto& c : candidates_) out.push_back(c.path);
  return out;
}

std::vector<RejectedCandidate> PluginRegistry::rejected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rejected_;
}

}  // namespace infer::host
