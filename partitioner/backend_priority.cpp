#include <algorithm>

#include "partitioner/partitioner.hpp"

namespace infer::partitioner {

Result<std::vector<std::string>> backend_priority(const std::vector<std::string>& requested,
                                                  bool strict) {
  std::vector<std::string> order;
  for (const std::string& name : requested) {
    if (name.empty()) return invalid_argument("backends: an entry is empty");
    if (std::find(order.begin(), order.end(), name) != order.end())
      return invalid_argument("backends: '" + name + "' is listed twice");
    order.push_back(name);
  }
  // With nothing listed there is nothing to be strict about: cpu runs everything it can.
  if (order.empty() ||
      (!strict && std::find(order.begin(), order.end(), kFallbackBackend) == order.end()))
    order.push_back(kFallbackBackend);
  return order;
}

}  // namespace infer::partitioner
