// Parsing of the NAME=VALUE command-line values: --input NAME=FILE.npy and
// --shape NAME=1x3x224x224. Errors quote the flag and the value so the user sees exactly
// which argument was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "infer/status.hpp"

namespace infer::cli {

struct NamedValue {
  std::string name;
  std::string value;
};

// Splits "NAME=VALUE" at the first '='. Both parts must be non-empty; `flag` ("--input")
// labels the message.
Result<NamedValue> parse_named_value(std::string_view text, std::string_view flag);

// Parses dims written "1x3x224x224" (also "1,3,224,224"); each dim a non-negative
// integer. "scalar" or "" is the rank-0 shape.
Result<std::vector<int64_t>> parse_dims(std::string_view text);

struct NamedShape {
  std::string name;
  std::vector<int64_t> shape;
};

// Parses a whole --shape value: "image=1x1x8x8".
Result<NamedShape> parse_shape_arg(std::string_view text);

// The inverse of parse_dims for messages: {1,1,8,8} -> "1x1x8x8", {} -> "scalar".
std::string dims_to_arg(const std::vector<int64_t>& dims);

}  // namespace infer::cli
