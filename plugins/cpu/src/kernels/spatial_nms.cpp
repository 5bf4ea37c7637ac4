// NonMaxSuppression (opsets 10, 11): for each batch and class, boxes whose score is
// above score_threshold are visited by decreasing score (ties: lower box index first);
// a box is kept unless its IoU with an already kept box exceeds iou_threshold, until
// max_output_boxes_per_class are kept. Output: [num_selected, 3] int64 rows (batch,
// class, box), in batch, class, selection order. The IoU test is ONNX Runtime's
// (boxes of zero area never suppress).
#include <algorithm>
#include <cmath>
#include <vector>

#include "../kernel.hpp"
#include "../node_util.hpp"
#include "spatial.hpp"

namespace infer::cpu::kernels {
namespace {

struct Box {
  float y1, x1, y2, x2;  // y1 <= y2, x1 <= x2
};

Box read_box(const float* b, bool center_point) {
  if (center_point) {
    // [x_center, y_center, width, height]
    const float hw = b[2] / 2, hh = b[3] / 2;
    return {b[1] - hh, b[0] - hw, b[1] + hh, b[0] + hw};
  }
  // [y1, x1, y2, x2] with the corners in either order.
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

bool suppresses(const Box& a, const Box& b, float iou_threshold) {
  const float ix1 = std::max(a.x1, b.x1), iy1 = std::max(a.y1, b.y1);
  const float ix2 = std::min(a.x2, b.x2), iy2 = std::min(a.y2, b.y2);
  const float inter = std::max(0.0f, ix2 - ix1) * std::max(0.0f, iy2 - iy1);
  if (inter <= 0) return false;
  const float area_a = (a.x2 - a.x1) * (a.y2 - a.y1);
  const float area_b = (b.x2 - b.x1) * (b.y2 - b.y1);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

class NmsKernel final : public Kernel {
 public:
  explicit NmsKernel(bool center_point) : center_point_(center_point) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& B = *ctx.input(0);
    const Tensor& S = *ctx.input(1);
    if (B.dtype != INFER_DTYPE_FLOAT32 || S.dtype != INFER_DTYPE_FLOAT32)
      return invalid("boxes and scores must be float32");
    if (B.rank() != 3 || B.dims[2] != 4)
      return invalid("boxes has shape ", dims_str(B.dims), ", expected [batch, boxes, 4]");
    if (S.rank() != 3 || S.dims[0] != B.dims[0] || S.dims[2] != B.dims[1])
      return invalid("scores has shape ", dims_str(S.dims), ", expected [", B.dims[0],
                     ", classes, ", B.dims[1], "] for boxes ", dims_str(B.dims));
    int64_t max_out = 0;
    float iou = 0, score_min = 0;
    bool has_score_min = false;
    if (const Tensor* t = ctx.input(2); t != nullptr && t->numel() > 0) {
      CPU_ASSIGN_OR_RETURN(Dims v, read_int_list(*t, "max_output_boxes_per_class"));
      if (v.size() != 1)
        return invalid("max_output_boxes_per_class must hold one value, got ", dims_str(t->dims));
      max_out = std::max<int64_t>(0, v[0]);
    }
    if (const Tensor* t = ctx.input(3); t != nullptr && t->numel() > 0) {
      CPU_ASSIGN_OR_RETURN(double v, read_scalar(*t, "iou_threshold"));
      if (!(v >= 0 && v <= 1)) return invalid("iou_threshold must be in [0, 1], got ", v);
      iou = static_cast<float>(v);
    }
    if (const Tensor* t = ctx.input(4); t != nullptr && t->numel() > 0) {
      CPU_ASSIGN_OR_RETURN(double v, read_scalar(*t, "score_threshold"));
      score_min = static_cast<float>(v);
      has_score_min = true;
    }
    const int64_t nb = B.dims[0], nbox = B.dims[1], ncls = S.dims[1];
    std::vector<int64_t> rows;
    std::vector<Box> boxes(static_cast<size_t>(nbox));
    std::vector<int64_t> order, kept;
    for (int64_t b = 0; b < nb && max_out > 0; ++b) {
      for (int64_t i = 0; i < nbox; ++i)
        boxes[static_cast<size_t>(i)] = read_box(B.as<float>() + (b * nbox + i) * 4, center_point_);
      for (int64_t c = 0; c < ncls; ++c) {
        const float* sc = S.as<float>() + (b * ncls + c) * nbox;
        order.clear();
        for (int64_t i = 0; i < nbox; ++i)
          // NaN scores are never selected (and would break the sort's ordering).
          if (!std::isnan(sc[i]) && (!has_score_min || sc[i] > score_min)) order.push_back(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t z) { return sc[a] > sc[z]; });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          bool keep = true;
          for (int64_t k : kept)
            if (suppresses(boxes[static_cast<size_t>(k)], boxes[static_cast<size_t>(i)], iou)) {
              keep = false;
              break;
            }
          if (!keep) continue;
          kept.push_back(i);
          rows.insert(rows.end(), {b, c, i});
        }
      }
    }
    const int64_t n = static_cast<int64_t>(rows.size() / 3);
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, INFER_DTYPE_INT64, {n, 3}));
    std::copy(rows.begin(), rows.end(), Y->mut<int64_t>());
    return Status::ok();
  }

 private:
  bool center_point_;
};

}  // namespace

Status non_max_suppression_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 2, 5));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 0), dtypes::kF32, "boxes"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 1), dtypes::kF32, "scores"));
  CPU_RETURN_IF_ERROR(
      check_dtype(node, node_input(node, 2), dtypes::kI64, "max_output_boxes_per_class"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 3), dtypes::kF32, "iou_threshold"));
  CPU_RETURN_IF_ERROR(check_dtype(node, node_input(node, 4), dtypes::kF32, "score_threshold"));
  const int64_t cpb = attr_i(node, "center_point_box", 0);
  if (cpb != 0 && cpb != 1)
    return unsupported("NonMaxSuppression center_point_box must be 0 or 1, got ", cpb);
  return Status::ok();
}

Result<KernelPtr> non_max_suppression_create(const KernelInit& init) {
  return KernelPtr(new NmsKernel(attr_i(*init.node, "center_point_box", 0) == 1));
}

}  // namespace infer::cpu::kernels
