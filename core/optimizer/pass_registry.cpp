#include "optimizer/pass_registry.hpp"

#include "optimizer/dead_code_elimination.hpp"

namespace infer::optimizer {

const std::vector<PassEntry>& pass_registry() {
  static const std::vector<PassEntry> kPasses = {
      {DeadCodeElimination::kName, 1, [] { return std::make_unique<DeadCodeElimination>(); }},
  };
  return kPasses;
}

std::vector<std::string> known_pass_names() {
  std::vector<std::string> names;
  for (const PassEntry& e : pass_registry()) names.push_back(e.name);
  return names;
}

}  // namespace infer::optimizer
