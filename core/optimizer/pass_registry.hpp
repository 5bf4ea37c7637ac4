// The table of every optimizer pass: its name, the lowest optimization level that runs
// it, and how to make one. Adding a pass touches its own file and one line here.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

struct PassEntry {
  std::string name;
  int min_level = 1;  // runs at this optimization level and above
  std::function<std::unique_ptr<Pass>()> make;
};

// In pipeline order.
const std::vector<PassEntry>& pass_registry();

// The registered pass names in pipeline order.
std::vector<std::string> known_pass_names();

}  // namespace infer::optimizer
