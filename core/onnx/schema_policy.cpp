// See schema_policy.hpp.
#include "onnx/schema_policy.hpp"

namespace infer::onnx_io {

std::optional<int> newest_known_opset(const std::string& domain) {
  const std::string key = domain == "ai.onnx" ? std::string() : domain;
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(key);
  if (it == ranges.end()) return std::nullopt;
  return it->second.second;
}

bool opset_is_newer_than_known(const std::string& domain, int64_t version) {
  auto newest = newest_known_opset(domain);
  return newest && version > *newest;
}

const onnx::OpSchema* BoundedSchemaRegistry::GetSchema(const std::string& key,
                                                       const int max_inclusive_version,
                                                       const std::string& domain) const {
  if (opset_is_newer_than_known(domain, max_inclusive_version)) return nullptr;
  // "ai.onnx" is an alias of the default domain, which the registry files under "".
  return onnx::OpSchemaRegistry::Instance()->GetSchema(
      key, max_inclusive_version, domain == "ai.onnx" ? std::string() : domain);
}

}  // namespace infer::onnx_io
