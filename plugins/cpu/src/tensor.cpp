#include "tensor.hpp"

#include <algorithm>
#include <cstring>

#include "half.hpp"

namespace infer::cpu {

std::string dims_str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    return invalid(what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

Result<Dims> broadcast_shapes(const std::vector<const Dims*>& shapes) {
  size_t rank = 0;
  for (const Dims* d : shapes) rank = std::max(rank, d->size());
  Dims out(rank, 1);
  for (const Dims* d : shapes) {
    size_t off = rank - d->size();
    for (size_t i = 0; i < d->size(); ++i) {
      int64_t v = (*d)[i];
      int64_t& o = out[off + i];
      if (v == o || v == 1) continue;
      if (o == 1) {
        o = v;
        continue;
      }
      std::string list;
      for (size_t k = 0; k < shapes.size(); ++k) {
        if (k) list += " and ";
        list += dims_str(*shapes[k]);
      }
      return invalid("incompatible broadcast shapes ", list);
    }
  }
  return out;
}

Result<std::vector<int64_t>> read_int_list(const Tensor& t, const char* what) {
  if (t.rank() > 1) return invalid(what, " must be 1-D, got shape ", dims_str(t.dims));
  int64_t n = t.numel();
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (t.dtype == INFER_DTYPE_INT64) {
    if (n) std::memcpy(out.data(), t.data, static_cast<size_t>(n) * sizeof(int64_t));
  } else if (t.dtype == INFER_DTYPE_INT32) {
    for (int64_t i = 0; i < n; ++i) out[i] = t.as<int32_t>()[i];
  } else {
    return invalid(what, " must be int32 or int64, got ", dtype_name(t.dtype));
  }
  return out;
}

Result<double> read_scalar(const Tensor& t, const char* what) {
  if (t.numel() != 1) return invalid(what, " must hold one element, got shape ", dims_str(t.dims));
  switch (t.dtype) {
    case INFER_DTYPE_FLOAT32:
      return static_cast<double>(*t.as<float>());
    case INFER_DTYPE_FLOAT64:
      return *t.as<double>();
    case INFER_DTYPE_FLOAT16:
      return static_cast<double>(half_to_float(*t.as<uint16_t>()));
    case INFER_DTYPE_BFLOAT16:
      return static_cast<double>(bfloat16_to_float(*t.as<uint16_t>()));
    case INFER_DTYPE_INT8:
      return *t.as<int8_t>();
    case INFER_DTYPE_UINT8:
      return *t.as<uint8_t>();
    case INFER_DTYPE_INT16:
      return *t.as<int16_t>();
    case INFER_DTYPE_UINT16:
      return *t.as<uint16_t>();
    case INFER_DTYPE_INT32:
      return *t.as<int32_t>();
    case INFER_DTYPE_UINT32:
      return *t.as<uint32_t>();
    case INFER_DTYPE_INT64:
      return static_cast<double>(*t.as<int64_t>());
    case INFER_DTYPE_UINT64:
      return static_cast<double>(*t.as<uint64_t>());
    default:
      return invalid(what, " has unsupported dtype ", dtype_name(t.dtype));
  }
}

}  // namespace infer::cpu
