#include "strided_copy.hpp"

#include <cstring>

namespace infer::cpu {
namespace {

template <typename T>
void copy_rows(const T* in, int64_t base, const Dims& shape, const Dims& strides, T* out,
               int64_t r0, int64_t r1) {
  const size_t rank = shape.size();
  const int64_t inner = shape[rank - 1];
  const int64_t step = strides[rank - 1];
  for (int64_t r = r0; r < r1; ++r) {
    int64_t off = base, rem = r;
    for (size_t d = rank - 1; d-- > 0;) {
      off += (rem % shape[d]) * strides[d];
      rem /= shape[d];
    }
    T* dst = out + r * inner;
    const T* src = in + off;
    if (step == 1) {
      std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(inner));
    } else {
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * step];
    }
  }
}

}  // namespace

void strided_copy(const KernelContext& ctx, const void* in, int64_t base, const Dims& out_dims,
                  const Dims& in_strides, size_t esize, void* out) {
  const int64_t total = sdk::element_count(out_dims.data(), out_dims.size());
  if (total == 0) return;
  // Drop size-1 dims and merge neighbours that are contiguous with each other.
  Dims shape, strides;
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] == 1) continue;
    if (!shape.empty() && strides.back() == in_strides[d] * out_dims[d]) {
      shape.back() *= out_dims[d];
      strides.back() = in_strides[d];
    } else {
      shape.push_back(out_dims[d]);
      strides.push_back(in_strides[d]);
    }
  }
  if (shape.empty()) {
    shape.push_back(1);
    strides.push_back(1);
  }
  const int64_t inner = shape.back();
  const size_t rows = static_cast<size_t>(total / inner);
  ctx.parallel_for(rows, grain_for(static_cast<size_t>(inner), 65536), [&](size_t r0, size_t r1) {
    const auto b = static_cast<int64_t>(r0), e = static_cast<int64_t>(r1);
    switch (esize) {
      case 1:
        copy_rows(static_cast<const uint8_t*>(in), base, shape, strides, static_cast<uint8_t*>(out),
                  b, e);
        break;
      case 2:
        copy_rows(static_cast<const uint16_t*>(in), base, shape, strides,
                  static_cast<uint16_t*>(out), b, e);
        break;
      case 4:
        copy_rows(static_cast<const uint32_t*>(in), base, shape, strides,
                  static_cast<uint32_t*>(out), b, e);
        break;
      case 8:
        copy_rows(static_cast<const uint64_t*>(in), base, shape, strides,
                  static_cast<uint64_t*>(out), b, e);
        break;
      default: {
        // Wider elements (complex): copy byte rows element by element.
        const auto* src = static_cast<const uint8_t*>(in);
        auto* dst = static_cast<uint8_t*>(out);
        const size_t rank = shape.size();
        for (int64_t r = b; r < e; ++r) {
          int64_t off = base, rem = r;
          for (size_t d = rank - 1; d-- > 0;) {
            off += (rem % shape[d]) * strides[d];
            rem /= shape[d];
          }
          for (int64_t i = 0; i < inner; ++i)
            std::memcpy(dst + (r * inner + i) * esize, src + (off + i * strides[rank - 1]) * esize,
                        esize);
        }
      }
    }
  });
}

}  // namespace infer::cpu
