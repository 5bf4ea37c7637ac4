// Deterministic inputs for model inputs the user did not give: the same name, dtype and
// shape always produce the same bytes, on every machine and every run, so benchmark and
// explain runs are reproducible.
//
// Values: floating types uniform in [0, 1); integer types small integers in [0, 10)
// (valid as indices and counts for most models); bool alternating at random; complex
// types with both parts uniform in [0, 1); 4-bit types in [0, 8); float8 types 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host_array.hpp"
#include "infer/status.hpp"

namespace infer::cli {

// The fixed seed generated inputs derive from (mixed with the input's name).
inline constexpr uint64_t kInputSeed = 0x5eed1234abcdULL;

// SplitMix64 (Steele, Lea and Flood, 2014): tiny, fast and fully specified, unlike the
// standard library distributions whose output differs between implementations.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, 1) with 24 random bits: exactly representable as float32.
  float next_float();
  // Uniform in [0, 1) with 53 random bits.
  double next_double();

 private:
  uint64_t state_;
};

// 64-bit FNV-1a of `text`: mixes the input's name into the seed.
uint64_t fnv1a64(const std::string& text);

// Generates the input `name` of `dtype` and `shape` (every dim known, >= 0). Fails for
// string inputs, which have no sensible random value.
Result<HostArray> generate_input(const std::string& name, DataType dtype, const std::vector<int64_t>& shape,
                                 uint64_t seed = kInputSeed);

}  // namespace infer::cli
