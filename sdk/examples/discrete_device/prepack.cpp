#include "prepack.hpp"

#include <cstring>
#include <string_view>

namespace infer::example {
namespace {

constexpr char kMagic[4] = {'E', 'X', 'P', 'K'};
constexpr uint32_t kPackedVersion = 1;

}  // namespace

MaybeFailure prepack_constant(const sdk::Host& host, const infer_node_view& node,
                              size_t input_index, void** out_data, size_t* out_size) {
  *out_data = nullptr;  // declining is always allowed
  *out_size = 0;
  // Only input B of a Gemm with transB = 0 and a plain float32 2-D constant.
  if (std::string_view(node.op_type ? node.op_type : "") != "Gemm" || input_index != 1)
    return std::nullopt;
  if (sdk::attr_int(&node, "transB", 0) != 0) return std::nullopt;  // already [N, K]
  const infer_value_view* b = sdk::input(&node, 1);
  if (b == nullptr || b->const_data == nullptr || b->dtype != INFER_DTYPE_FLOAT32 ||
      b->quant != nullptr || b->rank != 2 || b->dims[0] < 0 || b->dims[1] < 0)
    return std::nullopt;
  const int64_t k = b->dims[0], n = b->dims[1];
  const size_t bytes = static_cast<size_t>(k * n) * sizeof(float);
  if (b->const_size != bytes) return std::nullopt;  // malformed: compile will say so

  // The result is handed over to the host, so it must come from the host's allocator.
  const size_t total = sizeof(PackedHeader) + bytes;
  void* blob = host.raw()->host_alloc(host.raw()->host_ctx, total, alignof(PackedHeader));
  if (blob == nullptr)
    return failure(INFER_STATUS_OUT_OF_MEMORY, "example: prepack of '" + value_name(b) +
                                                   "': host_alloc of " + std::to_string(total) +
                                                   " bytes failed");
  PackedHeader header;
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kPackedVersion;
  header.rows = n;
  header.cols = k;
  std::memcpy(blob, &header, sizeof header);
  // Transpose [K, N] into [N, K]. memcpy per element: const_data has no alignment promise.
  const auto* src = static_cast<const unsigned char*>(b->const_data);
  auto* dst = static_cast<unsigned char*>(blob) + sizeof header;
  for (int64_t q = 0; q < k; ++q)
    for (int64_t j = 0; j < n; ++j)
      std::memcpy(dst + (j * k + q) * sizeof(float), src + (q * n + j) * sizeof(float),
                  sizeof(float));
  *out_data = blob;
  *out_size = total;
  return std::nullopt;
}

const void* read_packed(const void* data, size_t size, int64_t rows, int64_t cols) {
  if (data == nullptr || size < sizeof(PackedHeader)) return nullptr;
  PackedHeader header;
  std::memcpy(&header, data, sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 || header.version != kPackedVersion ||
      header.rows != rows || header.cols != cols ||
      size != sizeof header + static_cast<size_t>(rows * cols) * sizeof(float))
    return nullptr;
  return static_cast<const unsigned char*>(data) + sizeof header;
}

}  // namespace infer::example
