#include "kernels.hpp"

#include <algorithm>
#include <cstddef>

namespace infer::example {
namespace {

// Walks the elements of `out_dims` in row-major order and keeps, for each input, the
// offset of the input element that broadcasting maps onto the current output element.
// A broadcast dimension (size 1, or missing on the left) has stride 0, so the same input
// element is revisited along it.
class BroadcastWalker {
 public:
  BroadcastWalker(const Dims& out_dims, std::vector<const Dims*> inputs)
      : out_(out_dims), index_(out_dims.size(), 0) {
    const size_t rank = out_dims.size();
    for (const Dims* in : inputs) {
      std::vector<int64_t> strides(rank, 0);
      int64_t stride = 1;
      // Input dim i aligns with output dim i + (rank - in->size()).
      for (size_t i = in->size(); i-- > 0;) {
        const size_t o = i + (rank - in->size());
        strides[o] = (*in)[i] == 1 ? 0 : stride;
        stride *= (*in)[i];
      }
      strides_.push_back(std::move(strides));
      offsets_.push_back(0);
    }
  }

  int64_t offset(size_t input) const { return offsets_[input]; }

  // Moves to the next output element (like an odometer: the last dim turns fastest).
  void next() {
    for (size_t d = out_.size(); d-- > 0;) {
      ++index_[d];
      for (size_t i = 0; i < offsets_.size(); ++i) offsets_[i] += strides_[i][d];
      if (index_[d] < out_[d]) return;
      for (size_t i = 0; i < offsets_.size(); ++i) offsets_[i] -= strides_[i][d] * out_[d];
      index_[d] = 0;
    }
  }

 private:
  const Dims& out_;
  std::vector<int64_t> index_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> offsets_;
};

}  // namespace

int64_t element_count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<Dims> broadcast_shapes(const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Read both shapes from the right; a missing dim counts as 1.
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

void binary_broadcast(BinaryOp op, const float* a, const Dims& a_dims, const float* b,
                      const Dims& b_dims, float* out, const Dims& out_dims) {
  const int64_t n = element_count(out_dims);
  BroadcastWalker walk(out_dims, {&a_dims, &b_dims});
  for (int64_t i = 0; i < n; ++i, walk.next()) {
    const float x = a[walk.offset(0)];
    const float y = b[walk.offset(1)];
    switch (op) {
      case BinaryOp::kAdd:
        out[i] = x + y;
        break;
      case BinaryOp::kSub:
        out[i] = x - y;
        break;
      case BinaryOp::kMul:
        out[i] = x * y;
        break;
    }
  }
}

void dequantize(const uint8_t* x, int64_t n, float scale, int32_t zero_point, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(int32_t{x[i]} - zero_point) * scale;
}
void dequantize(const int8_t* x, int64_t n, float scale, int32_t zero_point, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(int32_t{x[i]} - zero_point) * scale;
}

void relu(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void matmul(const float* a, const Dims& a_dims, const float* b, const Dims& b_dims, float* y,
            const Dims& y_dims) {
  const size_t ra = a_dims.size(), rb = b_dims.size();
  const int64_t m = a_dims[ra - 2], k = a_dims[ra - 1], n = b_dims[rb - 1];
  // Broadcast over the batch dims only: each "element" of the walk is one matrix.
  const Dims a_batch(a_dims.begin(), a_dims.end() - 2);
  const Dims b_batch(b_dims.begin(), b_dims.end() - 2);
  const Dims y_batch(y_dims.begin(), y_dims.end() - 2);
  const int64_t batches = element_count(y_batch);
  BroadcastWalker walk(y_batch, {&a_batch, &b_batch});
  for (int64_t batch = 0; batch < batches; ++batch, walk.next()) {
    const float* am = a + walk.offset(0) * m * k;
    const float* bm = b + walk.offset(1) * k * n;
    float* ym = y + batch * m * n;
    std::fill(ym, ym + m * n, 0.0f);
    // i-p-j loop order reads b and writes y row by row.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        const float av = am[i * k + p];
        for (int64_t j = 0; j < n; ++j) ym[i * n + j] += av * bm[p * n + j];
      }
  }
}

void gemm(const GemmParams& p, const float* a, const float* b, const float* c, const Dims& c_dims,
          float* y) {
  const Dims y_dims = {p.m, p.n};
  // Offsets of C's elements as broadcast over [M, N], read in the same order as y.
  BroadcastWalker walk(y_dims, {&c_dims});
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j, walk.next()) {
      float acc = 0.0f;
      for (int64_t q = 0; q < p.k; ++q) {
        const float av = p.trans_a ? a[q * p.m + i] : a[i * p.k + q];
        const float bv = p.trans_b ? b[j * p.k + q] : b[q * p.n + j];
        acc += av * bv;
      }
      y[i * p.n + j] = p.alpha * acc + (c != nullptr ? p.beta * c[walk.offset(0)] : 0.0f);
    }
  }
}

}  // namespace infer::example
