#include "input_generator.hpp"

#include <bit>
#include <cstring>

#include "half_float.hpp"

namespace infer::cli {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float SplitMix64::next_float() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

double SplitMix64::next_double() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

uint64_t fnv1a64(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

namespace {

template <typename T>
void fill(HostArray& array, int64_t count, SplitMix64& rng, T (*make)(SplitMix64&)) {
  array.bytes.resize(static_cast<size_t>(count) * sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    const T value = make(rng);
    std::memcpy(array.bytes.data() + static_cast<size_t>(i) * sizeof(T), &value, sizeof(T));
  }
}

template <typename T>
T small_int(SplitMix64& rng) {
  return static_cast<T>(rng.next() % 10);
}

}  // namespace

Result<HostArray> generate_input(const std::string& name, DataType dtype, const std::vector<int64_t>& shape,
                                 uint64_t seed) {
  const std::optional<int64_t> maybe_count = element_count(shape);
  if (!maybe_count || *maybe_count > (int64_t{1} << 40)) {
    return invalid_argument("cannot generate input '" + name + "': shape " + shape_to_string(shape) +
                            " is invalid or too large");
  }
  const int64_t count = *maybe_count;
  HostArray array;
  array.dtype = dtype;
  array.shape = shape;
  SplitMix64 rng(seed ^ fnv1a64(name));
  switch (dtype) {
    case DataType::kFloat32: fill<float>(array, count, rng, [](SplitMix64& r) { return r.next_float(); }); break;
    case DataType::kFloat64: fill<double>(array, count, rng, [](SplitMix64& r) { return r.next_double(); }); break;
    case DataType::kFloat16:
      fill<uint16_t>(array, count, rng, [](SplitMix64& r) { return float_to_half(r.next_float()); });
      break;
    case DataType::kBFloat16:
      fill<uint16_t>(array, count, rng, [](SplitMix64& r) { return float_to_bfloat16(r.next_float()); });
      break;
    case DataType::kComplex64: fill<float>(array, count * 2, rng, [](SplitMix64& r) { return r.next_float(); }); break;
    case DataType::kComplex128:
      fill<double>(array, count * 2, rng, [](SplitMix64& r) { return r.next_double(); });
      break;
    case DataType::kInt8: fill<int8_t>(array, count, rng, small_int<int8_t>); break;
    case DataType::kInt16: fill<int16_t>(array, count, rng, small_int<int16_t>); break;
    case DataType::kInt32: fill<int32_t>(array, count, rng, small_int<int32_t>); break;
    case DataType::kInt64: fill<int64_t>(array, count, rng, small_int<int64_t>); break;
    case DataType::kUInt8: fill<uint8_t>(array, count, rng, small_int<uint8_t>); break;
    case DataType::kUInt16: fill<uint16_t>(array, count, rng, small_int<uint16_t>); break;
    case DataType::kUInt32: fill<uint32_t>(array, count, rng, small_int<uint32_t>); break;
    case DataType::kUInt64: fill<uint64_t>(array, count, rng, small_int<uint64_t>); break;
    case DataType::kBool:
      fill<uint8_t>(array, count, rng, [](SplitMix64& r) { return static_cast<uint8_t>(r.next() >> 63); });
      break;
    case DataType::kInt4:
    case DataType::kUInt4:
      // Two elements per byte, low nibble first; values 0..7 fit both signednesses.
      array.bytes.resize(static_cast<size_t>((count + 1) / 2));
      for (int64_t i = 0; i < count; ++i) {
        const auto nibble = static_cast<uint8_t>(rng.next() % 8);
        array.bytes[static_cast<size_t>(i / 2)] |= static_cast<uint8_t>(i % 2 == 0 ? nibble : nibble << 4);
      }
      break;
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      // The all-zero byte is +0 in every float8 format, so zeros are valid everywhere.
      array.bytes.assign(static_cast<size_t>(count), 0);
      break;
    case DataType::kString:
    case DataType::kUndefined:
      return unsupported("cannot generate input '" + name + "' of dtype " +
                         (dtype == DataType::kString ? std::string("string") : std::string("undefined")) +
                         ": infer-run only feeds numeric and bool tensors");
  }
  return array;
}

}  // namespace infer::cli
