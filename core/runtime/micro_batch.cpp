#include "runtime/micro_batch.hpp"

#include <algorithm>
#include <cstring>

namespace infer::runtime {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

Status check_one(const TensorInfo& info, const char* kind, int micro_batches) {
  const std::string where = "micro_batches " + std::to_string(micro_batches) + ": model " +
                            kind + " '" + info.name + "'";
  if (!info.rank_known)
    return invalid_argument(where +
                            " has an unknown rank; micro-batching splits every input and "
                            "joins every output along axis 0, which needs a known rank");
  if (info.dims.empty())
    return invalid_argument(where + " is a scalar; micro-batching splits every input and joins " +
                            "every output along axis 0 (the batch axis)");
  if (info.dims[0] >= 0)
    return invalid_argument(where + " " + info.shape_string() + " has a fixed dim 0 (" +
                            std::to_string(info.dims[0]) +
                            "); micro-batching needs a symbolic batch dim (e.g. 'batch') there");
  return Status::ok();
}

}  // namespace

Status check_micro_batchable(const std::vector<TensorInfo>& inputs,
                             const std::vector<TensorInfo>& outputs, int micro_batches) {
  if (micro_batches < 1)
    return invalid_argument("micro_batches must be 1 (no split) or more, got " +
                            std::to_string(micro_batches));
  if (micro_batches == 1) return Status::ok();
  if (inputs.empty())
    return invalid_argument("micro_batches " + std::to_string(micro_batches) +
                            ": the model has no inputs to split");
  for (const TensorInfo& info : inputs) INFER_RETURN_IF_ERROR(check_one(info, "input", micro_batches));
  for (const TensorInfo& info : outputs)
    INFER_RETURN_IF_ERROR(check_one(info, "output", micro_batches));
  return Status::ok();
}

Result<int64_t> micro_batch_rows(const std::vector<std::string>& names,
                                 const std::vector<const Tensor*>& inputs, size_t count) {
  const std::string setting = "micro_batches " + std::to_string(count);
  int64_t batch = -1;
  size_t first = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (t.shape().empty())
      return invalid_argument(setting + ": input '" + names[i] +
                              "' is a scalar and has no batch axis to split");
    const int64_t b = t.shape()[0];
    if (batch < 0) {
      batch = b;
      first = i;
    } else if (b != batch) {
      return invalid_argument(setting + ": input '" + names[i] + "' has batch (dim 0) " +
                              std::to_string(b) + ", but input '" + names[first] + "' has " +
                              std::to_string(batch) + "; every input is split along dim 0");
    }
  }
  if (batch <= 0) return int64_t{0};
  if (batch % static_cast<int64_t>(count) != 0)
    return invalid_argument("input '" + names[first] + "': batch (dim 0) " +
                            std::to_string(batch) + " is not divisible by " + setting);
  const int64_t rows = batch / static_cast<int64_t>(count);
  for (size_t i = 0; i < inputs.size(); ++i) {
    // 4-bit types pack two elements per byte: a micro-batch must start on a byte.
    const Tensor& t = *inputs[i];
    const int64_t per_row = t.element_count() / batch;
    if (storage_bytes(t.dtype(), per_row * rows) * count != t.size_bytes())
      return invalid_argument(setting + ": input '" + names[i] + "' (" +
                              std::string(dtype_name(t.dtype())) + " " + shape_text(t.shape()) +
                              ") cannot be split into micro-batches on byte boundaries");
  }
  return rows;
}

std::vector<HostInput> slice_inputs(const std::vector<const Tensor*>& inputs, size_t index,
                                    int64_t rows) {
  std::vector<HostInput> out;
  out.reserve(inputs.size());
  for (const Tensor* t : inputs) {
    const int64_t batch = t->shape()[0];
    const int64_t per_row = batch > 0 ? t->element_count() / batch : 0;
    const size_t bytes = storage_bytes(t->dtype(), per_row * rows);
    HostInput in;
    in.dtype = t->dtype();
    in.dims = t->shape();
    in.dims[0] = rows;
    in.data = static_cast<const uint8_t*>(t->data()) + bytes * index;
    in.bytes = bytes;
    out.push_back(std::move(in));
  }
  return out;
}

Result<std::vector<Tensor>> concat_outputs(const std::vector<std::string>& names,
                                           const std::vector<std::vector<Tensor>>& parts) {
  std::vector<Tensor> out;
  if (parts.empty()) return out;
  for (size_t o = 0; o < names.size(); ++o) {
    const Tensor& head = parts[0][o];
    if (head.shape().empty())
      return invalid_argument("output '" + names[o] +
                              "' is a scalar: micro-batch outputs cannot be joined along dim 0");
    std::vector<int64_t> dims = head.shape();
    int64_t total = 0;
    size_t bytes = 0;
    for (size_t m = 0; m < parts.size(); ++m) {
      const Tensor& t = parts[m][o];
      std::vector<int64_t> tail = t.shape();
      if (t.dtype() != head.dtype() || tail.size() != dims.size() ||
          !std::equal(tail.begin() + 1, tail.end(), dims.begin() + 1))
        return invalid_argument("output '" + names[o] + "': micro-batch " + std::to_string(m) +
                                " gave " + std::string(dtype_name(t.dtype())) + " " +
                                shape_text(t.shape()) + ", micro-batch 0 " +
                                std::string(dtype_name(head.dtype())) + " " +
                                shape_text(head.shape()) +
                                "; micro-batch outputs must differ only in dim 0");
      total += t.shape()[0];
      bytes += t.size_bytes();
    }
    dims[0] = total;
    Tensor joined = Tensor::zeros(head.dtype(), dims);
    if (joined.size_bytes() != bytes)
      return invalid_argument("output '" + names[o] + "' (" +
                              std::string(dtype_name(head.dtype())) + " " + shape_text(dims) +
                              ") cannot be joined from micro-batches on byte boundaries");
    auto* dst = static_cast<uint8_t*>(joined.mutable_data());
    for (size_t m = 0; m < parts.size(); ++m) {
      const Tensor& t = parts[m][o];
      if (t.size_bytes() == 0) continue;
      std::memcpy(dst, t.data(), t.size_bytes());
      dst += t.size_bytes();
    }
    out.push_back(std::move(joined));
  }
  return out;
}

}  // namespace infer::runtime
