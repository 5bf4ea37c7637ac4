// Helpers shared by the indexing and data-movement kernels of the tensor family
// (GatherElements, GatherND, Scatter*, Tile, Pad, ...): reading index tensors, resolving
// negative indices with an error that says which index is bad, moving elements by their
// byte width, and the arithmetic of the Scatter reductions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"

namespace infer::cpu::kernels {

// Reads an int32/int64 tensor of any shape as int64 values.
inline Result<std::vector<int64_t>> read_indices(const Tensor& t, const char* what) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype == INFER_DTYPE_INT64) {
    if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * sizeof(int64_t));
  } else if (t.dtype == INFER_DTYPE_INT32) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.as<int32_t>()[i];
  } else {
    return invalid(what, " must be int32 or int64, got ", dtype_name(t.dtype));
  }
  return v;
}

// Checks that `v` (element `pos` of the indices) lies in [-dim, dim-1] and makes it
// non-negative. The message matches Gather's: "index 7 out of range for axis 0 of size 5".
inline Status resolve_index(int64_t& v, int64_t dim, int64_t axis, size_t pos) {
  if (v < -dim || v >= dim)
    return invalid("index ", v, " out of range for axis ", axis, " of size ", dim,
                   " (indices element ", pos, ")");
  if (v < 0) v += dim;
  return Status::ok();
}

// Element count of `dims`, or an error when a dim is negative or the count overflows, so
// that a hostile shape input cannot make a kernel allocate or index past int64.
inline Result<int64_t> checked_numel(const Dims& dims, const char* what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return invalid(what, " ", dims_str(dims), " has a negative dim");
    if (d != 0 && n > (int64_t{1} << 62) / d)
      return invalid(what, " ", dims_str(dims), " has too many elements");
    n *= d;
  }
  return n;
}

// An unsigned integer type as wide as one element: data-movement kernels copy elements
// through it without caring what they hold.
template <size_t N>
struct bytes_type;
template <>
struct bytes_type<1> {
  using type = uint8_t;
};
template <>
struct bytes_type<2> {
  using type = uint16_t;
};
template <>
struct bytes_type<4> {
  using type = uint32_t;
};
template <>
struct bytes_type<8> {
  using type = uint64_t;
};

// Calls fn(Tag<U>{}) with U = the unsigned type of width `esize` (1, 2, 4 or 8 bytes).
template <typename F>
Status dispatch_bytes(size_t esize, F&& fn) {
  switch (esize) {
    case 1:
      return fn(Tag<uint8_t>{});
    case 2:
      return fn(Tag<uint16_t>{});
    case 4:
      return fn(Tag<uint32_t>{});
    case 8:
      return fn(Tag<uint64_t>{});
    default:
      return unsupported("elements of ", esize, " bytes are not supported");
  }
}

// The reductions of ScatterElements and ScatterND (add/mul from opset 16, max/min from 18).
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// Parses the `reduction` attribute; the error names the value and the opset it needs.
inline Result<Reduction> parse_reduction(const std::string& s, int64_t opset) {
  if (s == "none") return Reduction::kNone;
  if (opset >= 16 && s == "add") return Reduction::kAdd;
  if (opset >= 16 && s == "mul") return Reduction::kMul;
  if (opset >= 18 && s == "max") return Reduction::kMax;
  if (opset >= 18 && s == "min") return Reduction::kMin;
  return unsupported("reduction '", s, "' is not supported at opset ", opset,
                     " (none; add and mul from 16; max and min from 18)");
}

// dst = dst (op) src. Integers wrap (computed in uint64, whose low bits are the result
// for every narrower type), 16-bit floats compute in float and round once.
template <typename T>
inline void reduce_into(Reduction r, T& dst, T src) {
  if constexpr (std::is_same_v<T, bool>) {
    // Bool is dispatched only for Reduction::kNone, but keep the other ops defined:
    // add = or, mul = and, max = or, min = and.
    switch (r) {
      case Reduction::kNone:
        dst = src;
        break;
      case Reduction::kAdd:
      case Reduction::kMax:
        dst = dst || src;
        break;
      case Reduction::kMul:
      case Reduction::kMin:
        dst = dst && src;
        break;
    }
  } else if constexpr (std::is_integral_v<T>) {
    const auto a = static_cast<uint64_t>(dst), b = static_cast<uint64_t>(src);
    switch (r) {
      case Reduction::kNone:
        dst = src;
        break;
      case Reduction::kAdd:
        dst = static_cast<T>(a + b);
        break;
      case Reduction::kMul:
        dst = static_cast<T>(a * b);
        break;
      case Reduction::kMax:
        dst = dst < src ? src : dst;
        break;
      case Reduction::kMin:
        dst = src < dst ? src : dst;
        break;
    }
  } else {
    const compute_t<T> a = to_compute(dst), b = to_compute(src);
    switch (r) {
      case Reduction::kNone:
        dst = src;
        break;
      case Reduction::kAdd:
        dst = from_compute<T>(a + b);
        break;
      case Reduction::kMul:
        dst = from_compute<T>(a * b);
        break;
      case Reduction::kMax:
        dst = from_compute<T>(a < b ? b : a);
        break;
      case Reduction::kMin:
        dst = from_compute<T>(b < a ? b : a);
        break;
    }
  }
}

}  // namespace infer::cpu::kernels
