// Ops that keep the data and change only the shape: Reshape (the shape attribute before
// opset 5, an input from 5), Flatten, Squeeze, Unsqueeze and Identity. Each computes the
// output dims from the input shape (and shape/axes inputs) per run, then copies the
// bytes: outputs never alias inputs, which keeps buffer lifetimes simple. Dropout has its
// own kernel (tensor_dropout.cpp).
#include <algorithm>
#include <cstring>

#include "../kernel.hpp"
#include "../node_util.hpp"

namespace infer::cpu::kernels {
namespace {

enum class ReshapeKind { kReshape, kFlatten, kSqueeze, kUnsqueeze, kIdentity };

ReshapeKind reshape_kind_of(const char* op) {
  if (std::strcmp(op, "Reshape") == 0) return ReshapeKind::kReshape;
  if (std::strcmp(op, "Flatten") == 0) return ReshapeKind::kFlatten;
  if (std::strcmp(op, "Squeeze") == 0) return ReshapeKind::kSqueeze;
  if (std::strcmp(op, "Unsqueeze") == 0) return ReshapeKind::kUnsqueeze;
  return ReshapeKind::kIdentity;
}

Result<Dims> reshape_dims(const Dims& in, const std::vector<int64_t>& shape, bool allowzero) {
  Dims out(shape.size());
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t v = shape[i];
    if (v == -1) {
      if (infer_at >= 0) return invalid("shape ", dims_str(shape), " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (v == 0 && !allowzero) {
      if (i >= in.size())
        return invalid("shape ", dims_str(shape), " copies dim ", i, " (0) but the input ",
                       dims_str(in), " has only ", in.size(), " dims");
      v = in[i];
    }
    if (v < 0) return invalid("shape ", dims_str(shape), " has a negative dim");
    out[i] = v;
    known *= v;
  }
  const int64_t total = sdk::element_count(in.data(), in.size());
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      return invalid("cannot reshape ", dims_str(in), " (", total, " elements) to ",
                     dims_str(shape));
    out[infer_at] = total / known;
  } else if (known != total) {
    return invalid("cannot reshape ", dims_str(in), " (", total, " elements) to ", dims_str(shape));
  }
  return out;
}

class ReshapeLikeKernel final : public Kernel {
 public:
  ReshapeLikeKernel(ReshapeKind kind, int64_t opset, int64_t axis, Dims axes, bool allowzero)
      : kind_(kind), opset_(opset), axis_(axis), axes_(std::move(axes)), allowzero_(allowzero) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    CPU_ASSIGN_OR_RETURN(Dims out, output_dims(ctx, X));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (X.bytes()) std::memcpy(Y->data, X.data, X.bytes());
    return Status::ok();
  }

 private:
  Result<Dims> axes_from(const KernelContext& ctx) const {
    if (opset_ >= 13) {
      if (ctx.input(1) == nullptr) return Dims{};
      return read_int_list(*ctx.input(1), "axes");
    }
    return axes_;
  }

  Result<Dims> output_dims(const KernelContext& ctx, const Tensor& X) const {
    const int64_t rank = static_cast<int64_t>(X.rank());
    switch (kind_) {
      case ReshapeKind::kReshape: {
        // Before opset 5 the shape is an attribute (kept in axes_).
        if (opset_ < 5) return reshape_dims(X.dims, axes_, false);
        if (ctx.input(1) == nullptr) return invalid("the shape input is required");
        CPU_ASSIGN_OR_RETURN(std::vector<int64_t> shape, read_int_list(*ctx.input(1), "shape"));
        return reshape_dims(X.dims, shape, allowzero_);
      }
      case ReshapeKind::kFlatten: {
        if (axis_ < -rank || axis_ > rank)
          return invalid("axis ", axis_, " is out of range for rank ", rank);
        const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
        int64_t a = 1, b = 1;
        for (int64_t d = 0; d < rank; ++d) (d < axis ? a : b) *= X.dims[d];
        return Dims{a, b};
      }
      case ReshapeKind::kSqueeze: {
        CPU_ASSIGN_OR_RETURN(Dims axes, axes_from(ctx));
        std::vector<char> drop(static_cast<size_t>(rank), 0);
        if (axes.empty()) {
          for (int64_t d = 0; d < rank; ++d) drop[d] = X.dims[d] == 1;
        }
        for (int64_t a : axes) {
          CPU_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, "axes value"));
          if (X.dims[ax] != 1)
            return invalid("cannot squeeze axis ", a, " of size ", X.dims[ax], " (input ",
                           dims_str(X.dims), ")");
          drop[ax] = 1;
        }
        Dims out;
        for (int64_t d = 0; d < rank; ++d)
          if (!drop[d]) out.push_back(X.dims[d]);
        return out;
      }
      case ReshapeKind::kUnsqueeze: {
        CPU_ASSIGN_OR_RETURN(Dims axes, axes_from(ctx));
        const int64_t out_rank = rank + static_cast<int64_t>(axes.size());
        std::vector<char> inserted(static_cast<size_t>(out_rank), 0);
        for (int64_t a : axes) {
          CPU_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, out_rank, "axes value"));
          if (inserted[ax]) return invalid("axes ", dims_str(axes), " repeat axis ", a);
          inserted[ax] = 1;
        }
        Dims out;
        size_t next = 0;
        for (int64_t d = 0; d < out_rank; ++d) out.push_back(inserted[d] ? 1 : X.dims[next++]);
        return out;
      }
      case ReshapeKind::kIdentity:
        return X.dims;
    }
    return internal("bad kind");
  }

  ReshapeKind kind_;
  int64_t opset_;
  int64_t axis_;
  Dims axes_;
  bool allowzero_;
};

Result<KernelPtr> create_kind(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  const ReshapeKind k = reshape_kind_of(n.op_type);
  const char* list_attr = k == ReshapeKind::kReshape ? "shape" : "axes";
  return KernelPtr(new ReshapeLikeKernel(k, n.opset, attr_i(n, "axis", 1), attr_ints(n, list_attr),
                                         attr_i(n, "allowzero", 0) != 0));
}

}  // namespace

Status reshape_check(const infer_node_view& node) {
  if (node.opset < 5) {
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
    if (!has_attr(node, "shape"))
      return unsupported("Reshape requires the shape attribute before opset 5");
    return Status::ok();
  }
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 2));
  return check_dtype(node, node_input(node, 1), dtypes::kI64, "the shape");
}
Result<KernelPtr> reshape_create(const KernelInit& init) { return create_kind(init); }

Status flatten_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }
Result<KernelPtr> flatten_create(const KernelInit& init) { return create_kind(init); }

Status squeeze_check(const infer_node_view& node) {
  const bool unsqueeze = reshape_kind_of(node.op_type) == ReshapeKind::kUnsqueeze;
  if (node.opset >= 13) {
    CPU_RETURN_IF_ERROR(check_input_count(node, unsqueeze ? 2 : 1, 2));
    return check_dtype(node, node_input(node, 1), dtypes::kI64, "axes");
  }
  CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
  if (unsqueeze && !has_attr(node, "axes"))
    return unsupported("Unsqueeze requires the axes attribute before opset 13");
  return Status::ok();
}
Result<KernelPtr> squeeze_create(const KernelInit& init) { return create_kind(init); }

Status identity_check(const infer_node_view& node) { return check_input_count(node, 1, 1); }
Result<KernelPtr> identity_create(const KernelInit& init) { return create_kind(init); }

}  // namespace infer::cpu::kernels
