// Operator test cases read from a small text file (written by a generator script that
// computes the expected outputs independently, e.g. with numpy), so that every plugin's
// tests can run the same cases. The format, one item per line ('#' starts a comment):
//
//   case <name>
//   tol <atol> <rtol>                        optional; default 1e-5 1e-5
//   input <name> <dtype> <rank> <dims...> : <values...>     a graph input, in order
//   const <name> <dtype> <rank> <dims...> : <values...>     a constant (const_data)
//   value <name> <dtype> <rank> <dims...>                   an intermediate's view
//   node <op_type> <opset> <node_name> | <inputs...> | <outputs...>   ('-': omitted)
//        (<op_type> may be "<domain>:<op>", e.g. "ai.infer:FusedConv")
//   attr int <name> <v> | float <name> <v> | string <name> <s>
//   attr ints <name> <n> : <v...> | floats <name> <n> : <v...>
//   attr tensor <name> <dtype> <rank> <dims...> : <values...>        (applies to the
//                                                                    last node)
//   output <name> <dtype> <rank> <dims...> : <values...>    an expected graph output
//   end
//
// Values are decimal numbers (inf, -inf, nan allowed); bool is 0/1; float16 and
// bfloat16 values are given as their raw 16-bit patterns (decimal or 0x hex).
#pragma once

#include <string>
#include <vector>

#include "infer/test_support/graph_builder.hpp"
#include "infer/test_support/host_tensor.hpp"

namespace infer::test {

struct OpCaseValue {
  enum class Kind { kInput, kConst, kValue, kOutput };
  Kind kind = Kind::kInput;
  std::string name;
  HostTensor tensor;  // bytes empty for kValue
};

struct OpCaseNode {
  std::string domain;  // "" for ONNX; the file writes "<domain>:<op>" for others
  std::string op_type;
  int64_t opset = 17;
  std::string name;
  std::vector<std::string> inputs;   // "" for an omitted input
  std::vector<std::string> outputs;  // "" for an omitted output
  std::vector<AttrSpec> attrs;
};

struct OpCase {
  std::string name;
  double atol = 1e-5;
  double rtol = 1e-5;
  std::vector<OpCaseValue> values;
  std::vector<OpCaseNode> nodes;

  std::vector<HostTensor> inputs() const;  // graph inputs, in order
  std::vector<std::string> input_names() const;
  std::vector<const OpCaseValue*> expected() const;  // expected outputs, in order
  // Builds the case's graph into `builder` (use a fresh builder per case).
  const infer_graph_view* build(GraphBuilder& builder) const;
  // "" when `actual` matches the expected outputs within tolerance, else a description
  // of the first mismatches.
  std::string compare(const std::vector<HostTensor>& actual) const;
};

// Reads every case of the file; on a malformed file returns {} and sets *error to
// "<path>:<line>: <what>".
std::vector<OpCase> load_op_cases(const std::string& path, std::string* error);

}  // namespace infer::test
