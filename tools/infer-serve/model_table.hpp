// The models a server serves, by name and version, and the server-wide state the
// endpoints report (live, ready, stopping). Filled before serving starts; read-only
// afterwards, so lookups need no lock.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "metrics.hpp"
#include "served_model.hpp"

namespace infer::serve {

class ModelTable {
 public:
  void add(std::unique_ptr<ServedModel> model);
  // The named model at `version`, or its highest version when `version` is "". NotFound
  // naming the model or the version (and the versions there are).
  Result<ServedModel*> find(const std::string& name, const std::string& version) const;
  // Every version of `name`, ascending ("1", "2").
  std::vector<std::string> versions(const std::string& name) const;
  std::vector<ServedModel*> all() const;
  bool empty() const { return models_.empty(); }

 private:
  std::map<std::string, std::map<int64_t, std::unique_ptr<ServedModel>>> models_;
};

struct ServerState {
  std::atomic<bool> ready{false};     // every model loaded and warmed up, not stopping
  std::atomic<bool> stopping{false};  // SIGTERM/SIGINT seen: new inferences get 503
  // Infer requests accepted by an endpoint whose response is not yet written; the
  // shutdown waits for it to reach 0.
  std::atomic<int64_t> pending{0};
};

}  // namespace infer::serve
