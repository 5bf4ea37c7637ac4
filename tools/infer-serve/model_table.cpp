#include "model_table.hpp"

#include <charconv>

namespace infer::serve {

void ModelTable::add(std::unique_ptr<ServedModel> model) {
  const std::string name = model->name();
  const int64_t version = model->settings().version;
  models_[name][version] = std::move(model);
}

Result<ServedModel*> ModelTable::find(const std::string& name, const std::string& version) const {
  const auto it = models_.find(name);
  if (it == models_.end() || it->second.empty()) return not_found("unknown model '" + name + "'");
  if (version.empty()) return it->second.rbegin()->second.get();
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
  const auto found = ec == std::errc() && end == version.data() + version.size()
                         ? it->second.find(v)
                         : it->second.end();
  if (found == it->second.end()) {
    std::string have;
    for (const auto& [number, model] : it->second)
      have += (have.empty() ? "" : ", ") + std::to_string(number);
    return not_found("model '" + name + "' has no version '" + version + "' (versions: " + have +
                     ")");
  }
  return found->second.get();
}

std::vector<std::string> ModelTable::versions(const std::string& name) const {
  std::vector<std::string> out;
  const auto it = models_.find(name);
  if (it == models_.end()) return out;
  for (const auto& [number, model] : it->second) out.push_back(std::to_string(number));
  return out;
}

std::vector<ServedModel*> ModelTable::all() const {
  std::vector<ServedModel*> out;
  for (const auto& [name, versions] : models_) {
    for (const auto& [number, model] : versions) out.push_back(model.get());
  }
  return out;
}

}  // namespace infer::serve
