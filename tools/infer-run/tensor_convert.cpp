#include "tensor_convert.hpp"

#include <cstring>

#include "half_float.hpp"
#include "npy.hpp"

namespace infer::cli {

Result<Tensor> to_tensor(const HostArray& array) {
  return Tensor::from_bytes(array.dtype, array.shape, array.bytes.data(), array.bytes.size());
}

HostArray to_host_array(const Tensor& tensor) {
  HostArray array;
  array.dtype = tensor.dtype();
  array.shape = tensor.shape();
  const auto* data = static_cast<const uint8_t*>(tensor.data());
  if (data != nullptr) array.bytes.assign(data, data + tensor.size_bytes());
  return array;
}

Result<HostArray> to_npy_compatible(const HostArray& array, const std::string& what) {
  if (npy_descr(array.dtype)) return array;
  const int64_t count = element_count(array.shape).value_or(0);
  HostArray out;
  out.shape = array.shape;
  switch (array.dtype) {
    case DataType::kBFloat16: {
      out.dtype = DataType::kFloat32;
      out.bytes.resize(static_cast<size_t>(count) * 4);
      for (int64_t i = 0; i < count; ++i) {
        uint16_t bits = 0;
        std::memcpy(&bits, array.bytes.data() + i * 2, 2);
        const float value = bfloat16_to_float(bits);
        std::memcpy(out.bytes.data() + i * 4, &value, 4);
      }
      return out;
    }
    case DataType::kInt4:
    case DataType::kUInt4: {
      const bool is_signed = array.dtype == DataType::kInt4;
      out.dtype = is_signed ? DataType::kInt8 : DataType::kUInt8;
      out.bytes.resize(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) {
        const uint8_t byte = array.bytes[static_cast<size_t>(i / 2)];
        uint8_t nibble = i % 2 == 0 ? (byte & 0x0f) : (byte >> 4);
        // Sign-extend the 4-bit two's complement value.
        if (is_signed && (nibble & 0x08)) nibble |= 0xf0;
        out.bytes[static_cast<size_t>(i)] = nibble;
      }
      return out;
    }
    default:
      return unsupported(what + " has dtype " + std::string(dtype_name(array.dtype)) +
                         ", which numpy cannot hold in a .npy file");
  }
}

}  // namespace infer::cli
