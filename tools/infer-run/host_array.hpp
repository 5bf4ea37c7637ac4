// A plain host array: the CLI's own currency for tensors read from and written to .npy
// files and for generated inputs. It is deliberately independent of infer::Tensor so the
// file formats and the input generator can be built and tested without the runtime; the
// conversion to and from Tensor lives in tensor_convert.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "infer/dtype.hpp"

namespace infer::cli {

struct HostArray {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<uint8_t> bytes;  // row-major (C order), little-endian
};

// Product of the dims (1 for a scalar), or nullopt when a dim is negative or the product
// does not fit in int64.
std::optional<int64_t> element_count(const std::vector<int64_t>& shape);

// "[8,1,8,8]" ("[]" for a scalar): the rendering used in every message and report.
std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace infer::cli
