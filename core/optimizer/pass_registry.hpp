// The table of every optimizer pass: its name, the lowest optimization level that runs
// it, and how to make one. Adding a pass touches its own file and one line in its
// group's registration function.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "optimizer/pass.hpp"

namespace infer::optimizer {

// Optimization levels (--opt-level, YAML optimization.level).
inline constexpr int kLevelBasic = 1;     // folding, elimination, CSE: exact rewrites
inline constexpr int kLevelExtended = 2;  // operator fusion into the ai.infer domain
inline constexpr int kLevelAll = 3;       // layout rewrites: transposes sunk and cancelled

struct PassEntry {
  std::string name;
  int min_level = kLevelBasic;  // runs at this optimization level and above
  std::function<std::unique_ptr<Pass>()> make;
};

// In pipeline order: the basic passes, dead-code elimination, then the transformer
// fusions (which match raw MatMul/Add/Softmax chains and so go before the generic
// bias/activation fusions), then the generic fusions and layout passes.
const std::vector<PassEntry>& pass_registry();

// The registered pass names in pipeline order.
std::vector<std::string> known_pass_names();

// Each group appends its passes in order; one file per group.
void register_basic_passes(std::vector<PassEntry>& passes);        // basic_passes.cpp
void register_transformer_passes(std::vector<PassEntry>& passes);  // transformer_passes.cpp
void register_fusion_passes(std::vector<PassEntry>& passes);       // fusion_passes.cpp

}  // namespace infer::optimizer
