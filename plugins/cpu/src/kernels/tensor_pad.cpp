// Pad: pads (or, with negative pads, crops) every dim, or the dims named by `axes` (opset
// 18). Modes: constant (the value attribute before opset 11, the constant_value input
// from 11), edge (repeats the border), reflect (mirrors without repeating the border,
// periodically when the pad exceeds the dim, as numpy does) and wrap (opset 19). Pads are
// the `paddings` attribute at opset 1, `pads` at 2-10 and an input from 11.
//
// Each output coordinate maps to an input coordinate in the original (uncropped) input,
// so negative pads behave as padding followed by cropping, as in ONNX Runtime.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "tensor_index.hpp"

namespace infer::cpu::kernels {
namespace {

enum class PadMode { kConstant, kEdge, kReflect, kWrap };

Result<PadMode> parse_mode(const std::string& s, int64_t opset) {
  if (s == "constant") return PadMode::kConstant;
  if (s == "edge") return PadMode::kEdge;
  if (s == "reflect") return PadMode::kReflect;
  if (s == "wrap" && opset >= 19) return PadMode::kWrap;
  return unsupported("Pad mode '", s, "' is not supported at opset ", opset);
}

// The input coordinate for output coordinate o along a dim of size n padded by `begin`,
// or -1 when the constant value goes there.
int64_t map_coord(PadMode mode, int64_t o, int64_t begin, int64_t n) {
  const int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return i < 0 ? 0 : n - 1;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t p = 2 * (n - 1);
      const int64_t m = ((i % p) + p) % p;
      return m < n ? m : p - m;
    }
    case PadMode::kWrap:
      return ((i % n) + n) % n;
  }
  return -1;
}

class PadKernel final : public Kernel {
 public:
  PadKernel(int64_t opset, PadMode mode, Dims pads_attr, double value_attr)
      : opset_(opset), mode_(mode), pads_attr_(std::move(pads_attr)), value_attr_(value_attr) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& X = *ctx.input(0);
    const auto rank = static_cast<int64_t>(X.rank());
    Dims pads = pads_attr_;
    if (opset_ >= 11) {
      if (ctx.input(1) == nullptr) return invalid("the pads input is required");
      CPU_ASSIGN_OR_RETURN(pads, read_int_list(*ctx.input(1), "pads"));
    }
    Dims axes;
    if (opset_ >= 18 && ctx.input(3) != nullptr) {
      CPU_ASSIGN_OR_RETURN(axes, read_int_list(*ctx.input(3), "axes"));
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const auto n_axes = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads.size()) != 2 * n_axes)
      return invalid("pads ", dims_str(pads), " must have ", 2 * n_axes, " values for ", n_axes,
                     " axes of the input ", dims_str(X.dims));
    Dims begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
    std::vector<char> seen(static_cast<size_t>(rank), 0);
    for (int64_t k = 0; k < n_axes; ++k) {
      CPU_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(axes[k], rank, "axes value"));
      if (seen[ax]) return invalid("axes ", dims_str(axes), " repeat axis ", axes[k]);
      seen[ax] = 1;
      begin[ax] = pads[k];
      end[ax] = pads[k + n_axes];
    }
    Dims out(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      constexpr int64_t kLimit = int64_t{1} << 60;
      if (std::abs(begin[d]) > kLimit || std::abs(end[d]) > kLimit)
        return invalid("pads ", dims_str(pads), " are too large");
      out[d] = X.dims[d] + begin[d] + end[d];
      if (out[d] < 0)
        return invalid("pads ", dims_str(pads), " crop axis ", d, " of size ", X.dims[d],
                       " below zero");
      if (mode_ != PadMode::kConstant && X.dims[d] == 0 && out[d] > 0)
        return invalid("cannot pad the empty axis ", d, " in ", mode_name(), " mode");
    }
    std::vector<uint8_t> value;
    CPU_ASSIGN_OR_RETURN(value, constant_value(ctx, X));
    CPU_ASSIGN_OR_RETURN(int64_t total, checked_numel(out, "output shape"));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, X.dtype, out));
    if (total == 0) return Status::ok();
    if (rank == 0) {
      std::memcpy(Y->data, X.data, X.bytes());
      return Status::ok();
    }
    // Per dim, the input coordinate of every output coordinate (-1: constant).
    std::vector<Dims> maps(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      maps[d].resize(static_cast<size_t>(out[d]));
      for (int64_t o = 0; o < out[d]; ++o) maps[d][o] = map_coord(mode_, o, begin[d], X.dims[d]);
    }
    const Dims in_strides = strides_of(X.dims);
    const int64_t last = out[rank - 1], rows = total / last;
    const Dims& last_map = maps[rank - 1];
    return dispatch_bytes(sdk::dtype_size(X.dtype), [&]<typename U>(Tag<U>) -> Status {
      U fill;
      std::memcpy(&fill, value.data(), sizeof(U));
      const U* x = X.as<U>();
      U* y = Y->mut<U>();
      ctx.parallel_for(static_cast<size_t>(rows), grain_for(static_cast<size_t>(last), 65536),
                       [&](size_t r0, size_t r1) {
                         for (size_t r = r0; r < r1; ++r) {
                           U* dst = y + static_cast<int64_t>(r) * last;
                           int64_t rem = static_cast<int64_t>(r), off = 0;
                           bool constant_row = false;
                           for (int64_t d = rank - 1; d-- > 0;) {
                             const int64_t i = maps[d][rem % out[d]];
                             rem /= out[d];
                             if (i < 0) constant_row = true;
                             off += i * in_strides[d];
                           }
                           if (constant_row) {
                             std::fill(dst, dst + last, fill);
                             continue;
                           }
                           for (int64_t j = 0; j < last; ++j)
                             dst[j] = last_map[j] < 0 ? fill : x[off + last_map[j]];
                         }
                       });
      return Status::ok();
    });
  }

 private:
  const char* mode_name() const {
    switch (mode_) {
      case PadMode::kConstant:
        return "constant";
      case PadMode::kEdge:
        return "edge";
      case PadMode::kReflect:
        return "reflect";
      case PadMode::kWrap:
        return "wrap";
    }
    return "?";
  }

  // The bytes of the constant to pad with, in the dtype of the data (zero by default).
  Result<std::vector<uint8_t>> constant_value(const KernelContext& ctx, const Tensor& X) const {
    const size_t esize = sdk::dtype_size(X.dtype);
    std::vector<uint8_t> v(esize, 0);
    if (opset_ >= 11) {
      const Tensor* C = ctx.input(2);
      if (C == nullptr || C->numel() == 0) return v;
      if (C->dtype != X.dtype)
        return invalid("constant_value has dtype ", dtype_name(C->dtype), ", expected ",
                       dtype_name(X.dtype));
      if (C->numel() != 1)
        return invalid("constant_value must hold one element, got shape ", dims_str(C->dims));
      std::memcpy(v.data(), C->data, esize);
      return v;
    }
    CPU_RETURN_IF_ERROR(dispatch(X.dtype, dtypes::kAny, "Pad", [&]<typename T>(Tag<T>) -> Status {
      T t;
      if constexpr (std::is_same_v<T, bool>)
        t = value_attr_ != 0;
      else
        t = from_compute<T>(static_cast<compute_t<T>>(value_attr_));
      std::memcpy(v.data(), &t, sizeof(T));
      return Status::ok();
    }));
    return v;
  }

  int64_t opset_;
  PadMode mode_;
  Dims pads_attr_;
  double value_attr_;
};

}  // namespace

Status pad_check(const infer_node_view& node) {
  if (node.opset >= 11) {
    CPU_RETURN_IF_ERROR(check_input_count(node, 2, node.opset >= 18 ? 4 : 3));
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kI64, "pads"));
    CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), dtypes::kInts, "axes"));
  } else {
    CPU_RETURN_IF_ERROR(check_input_count(node, 1, 1));
    if (!has_attr(node, node.opset < 2 ? "paddings" : "pads"))
      return unsupported("Pad requires the ", node.opset < 2 ? "paddings" : "pads",
                         " attribute before opset 11");
  }
  return parse_mode(attr_s(node, "mode", "constant"), node.opset).status();
}

Result<KernelPtr> pad_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  CPU_ASSIGN_OR_RETURN(PadMode mode, parse_mode(attr_s(n, "mode", "constant"), n.opset));
  Dims pads;
  if (n.opset < 11) pads = attr_ints(n, n.opset < 2 ? "paddings" : "pads");
  return KernelPtr(new PadKernel(n.opset, mode, std::move(pads), attr_f(n, "value", 0.0)));
}

}  // namespace infer::cpu::kernels
