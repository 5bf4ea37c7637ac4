// Attention (ai.infer, sdk/FUSED_OPS.md): multi-head scaled-dot-product attention on
// unsplit heads. Q [B, Sq, H·Dk], K [B, Sk, H·Dk], V [B, Sk, H·Dv], optional additive
// mask broadcasting (right-aligned) to the scores [B, H, Sq, Sk]; Y [B, Sq, H·Dv]. Per
// batch b and head h:
//   Y[b, :, h·Dv:(h+1)·Dv] = Softmax(scale · Qh·Khᵀ + mask[b, h], axis = -1) · Vh
// Each (b, h) pair is one task on the host's threads. float32 runs both products on the
// SIMD library's sgemm (simd/gemm.hpp) with the heads read in place through strides (Kᵀ
// included) and normalizes rows with its vectorized softmax (simd/softmax.hpp); the other
// float types compute in double with the plain loop (nn_gemm_generic.hpp) and the
// Softmax kernel's own row function (softmax_row.hpp). Both subtract the row max first.
#include <algorithm>
#include <vector>

#include "../host_threads.hpp"
#include "../node_util.hpp"
#include "fused_common.hpp"
#include "nn_gemm_generic.hpp"
#include "nn_util.hpp"
#include "simd/gemm.hpp"
#include "simd/scratch.hpp"
#include "simd/softmax.hpp"
#include "simd/vec.hpp"
#include "softmax_row.hpp"

namespace infer::cpu::kernels {
namespace {

struct Shapes {
  int64_t B, H, Sq, Sk, Dk, Dv;
  int64_t mask_stride[4];  // element strides of the mask over [B, H, Sq, Sk]; 0 broadcasts
};

class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(int64_t num_heads, float scale) : num_heads_(num_heads), scale_(scale) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& Q = *ctx.input(0);
    const Tensor& K = *ctx.input(1);
    const Tensor& V = *ctx.input(2);
    const Tensor* mask = ctx.input(3);
    Shapes s;
    CPU_RETURN_IF_ERROR(plan(Q, K, V, mask, &s));
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, Q.dtype, Dims{s.B, s.Sq, s.H * s.Dv}));
    if (Y->numel() == 0) return Status::ok();
    if (Q.dtype == INFER_DTYPE_FLOAT32) {
      run_tasks(ctx, s, [&](int64_t b, int64_t h, bool parallel) {
        head_f32(ctx, s, Q, K, V, mask, *Y, b, h, parallel);
      });
      return Status::ok();
    }
    return dispatch_float(Q.dtype, "Q", [&]<typename T>(Tag<T>) -> Status {
      run_tasks(ctx, s,
                [&](int64_t b, int64_t h, bool) { head_generic<T>(s, Q, K, V, mask, *Y, b, h); });
      return Status::ok();
    });
  }

 private:
  Status plan(const Tensor& Q, const Tensor& K, const Tensor& V, const Tensor* mask,
              Shapes* s) const {
    if (K.dtype != Q.dtype || V.dtype != Q.dtype || (mask != nullptr && mask->dtype != Q.dtype))
      return invalid("Q, K, V and mask must have the same dtype, got ", dtype_name(Q.dtype), ", ",
                     dtype_name(K.dtype), ", ", dtype_name(V.dtype),
                     mask ? cat(", ", dtype_name(mask->dtype)) : "");
    if (Q.rank() != 3 || K.rank() != 3 || V.rank() != 3)
      return invalid("Q ", dims_str(Q.dims), ", K ", dims_str(K.dims), " and V ", dims_str(V.dims),
                     " must be 3-D [batch, sequence, heads * head size]");
    const int64_t H = num_heads_;
    if (Q.dims[0] != K.dims[0] || Q.dims[0] != V.dims[0])
      return invalid("batch sizes differ: Q ", dims_str(Q.dims), ", K ", dims_str(K.dims), ", V ",
                     dims_str(V.dims));
    if (K.dims[1] != V.dims[1])
      return invalid("K ", dims_str(K.dims), " and V ", dims_str(V.dims),
                     " must have the same sequence length (dim 1)");
    if (Q.dims[2] != K.dims[2])
      return invalid("Q ", dims_str(Q.dims), " and K ", dims_str(K.dims),
                     " must have the same last dim (heads * key size)");
    for (const Tensor* t : {&Q, &V})
      if (t->dims[2] % H != 0)
        return invalid("num_heads ", H, " does not divide the last dim of ", t == &Q ? "Q " : "V ",
                       dims_str(t->dims));
    s->B = Q.dims[0];
    s->H = H;
    s->Sq = Q.dims[1];
    s->Sk = K.dims[1];
    s->Dk = Q.dims[2] / H;
    s->Dv = V.dims[2] / H;
    for (int64_t& st : s->mask_stride) st = 0;
    if (mask == nullptr) return Status::ok();
    const Dims scores = {s->B, s->H, s->Sq, s->Sk};
    if (mask->rank() > 4)
      return invalid("mask has shape ", dims_str(mask->dims), ", rank ", mask->rank(),
                     " does not broadcast to the scores [B,H,Sq,Sk] = ", dims_str(scores));
    const size_t lead = 4 - mask->rank();
    int64_t stride = 1;
    for (size_t i = mask->rank(); i-- > 0;) {
      const int64_t md = mask->dims[i], sd = scores[lead + i];
      if (md != 1 && md != sd)
        return invalid("mask has shape ", dims_str(mask->dims),
                       ", which does not broadcast to the scores [B,H,Sq,Sk] = ", dims_str(scores),
                       ": mask dim ", i, " is ", md, ", expected 1 or ", sd);
      s->mask_stride[lead + i] = md == 1 ? 0 : stride;
      stride *= md;
    }
    return Status::ok();
  }

  // Runs task(b, h, parallel) for every (batch, head) pair: one pair per host task, or,
  // when there is a single pair, on this thread with its products spread over the threads.
  template <typename F>
  static void run_tasks(KernelContext& ctx, const Shapes& s, F&& task) {
    const int64_t n = s.B * s.H;
    if (n == 1) {
      task(0, 0, true);
      return;
    }
    ctx.parallel_for(static_cast<size_t>(n), 1, [&](size_t t0, size_t t1) {
      for (size_t t = t0; t < t1; ++t)
        task(static_cast<int64_t>(t) / s.H, static_cast<int64_t>(t) % s.H, false);
    });
  }

  // scores[i, j] = scale · score + mask, then each row softmaxed in place.
  template <typename T, typename Acc>
  void scale_mask_softmax(const Shapes& s, const Tensor* mask, int64_t b, int64_t h,
                          Acc* scores) const {
    const T* m = mask != nullptr ? mask->as<T>() : nullptr;
    const int64_t mbase = b * s.mask_stride[0] + h * s.mask_stride[1];
    for (int64_t i = 0; i < s.Sq; ++i) {
      Acc* row = scores + i * s.Sk;
      for (int64_t j = 0; j < s.Sk; ++j) {
        Acc v = static_cast<Acc>(scale_) * row[j];
        if (m != nullptr)
          v += static_cast<Acc>(to_compute(m[mbase + i * s.mask_stride[2] + j * s.mask_stride[3]]));
        row[j] = v;
      }
      softmax_row<Acc>(row, row, s.Sk, 1, SoftmaxMode::kSoftmax);
    }
  }

  // float32: scores = scale · Qh·Khᵀ by simd::sgemm with Kh read transposed through its
  // strides (no copy), the mask added and each row softmaxed by the vectorized row
  // kernels, then Yh = P·Vh by sgemm again, written in place into Y's head columns.
  void head_f32(const KernelContext& ctx, const Shapes& s, const Tensor& Q, const Tensor& K,
                const Tensor& V, const Tensor* mask, Tensor& Y, int64_t b, int64_t h,
                bool parallel) const {
    const int64_t qld = s.H * s.Dk, vld = s.H * s.Dv;
    const float* qh = Q.as<float>() + b * s.Sq * qld + h * s.Dk;
    const float* kh = K.as<float>() + b * s.Sk * qld + h * s.Dk;
    const float* vh = V.as<float>() + b * s.Sk * vld + h * s.Dv;
    float* yh = Y.mut<float>() + b * s.Sq * vld + h * s.Dv;
    const simd::Isa isa = kernel_isa();
    const HostThreads host_threads(ctx.host());
    const simd::SerialThreads serial;
    const simd::Threads& threads = parallel ? static_cast<const simd::Threads&>(host_threads)
                                            : static_cast<const simd::Threads&>(serial);
    // The calling thread's scratch (sgemm uses other slots); the row loop below may run
    // on other threads, which the host's isolated parallel_for makes safe.
    float* const scores =
        simd::scratch_as<float>(simd::ScratchSlot::kMisc, static_cast<size_t>(s.Sq * s.Sk));
    // B(d, j) = Kh[j, d]: row stride 1, column stride qld.
    simd::sgemm(isa, threads, s.Sq, s.Sk, s.Dk, scale_, simd::GemmOperand::raw(qh, qld, 1),
                simd::GemmOperand::raw(kh, 1, qld), 0.0f, scores, s.Sk);
    const float* m = mask != nullptr ? mask->as<float>() : nullptr;
    const int64_t mbase = b * s.mask_stride[0] + h * s.mask_stride[1];
    threads.run(static_cast<size_t>(s.Sq), std::max<size_t>(1, 16384 / static_cast<size_t>(s.Sk)),
                [&](size_t i0, size_t i1) {
                  for (size_t i = i0; i < i1; ++i) {
                    float* row = scores + static_cast<int64_t>(i) * s.Sk;
                    if (m != nullptr) {
                      const float* mr = m + mbase + static_cast<int64_t>(i) * s.mask_stride[2];
                      if (s.mask_stride[3] == 1)
                        simd::vec_binary(isa, simd::BinaryOp::kAdd, row, mr, row,
                                         static_cast<size_t>(s.Sk));
                      else
                        simd::vec_binary_scalar(isa, simd::BinaryOp::kAdd, row, *mr, row,
                                                static_cast<size_t>(s.Sk), false);
                    }
                    simd::softmax_row(isa, row, row, static_cast<size_t>(s.Sk));
                  }
                });
    simd::sgemm(isa, threads, s.Sq, s.Dv, s.Sk, 1.0f, simd::GemmOperand::raw(scores, s.Sk, 1),
                simd::GemmOperand::raw(vh, vld, 1), 0.0f, yh, vld);
  }

  template <typename T>
  void head_generic(const Shapes& s, const Tensor& Q, const Tensor& K, const Tensor& V,
                    const Tensor* mask, Tensor& Y, int64_t b, int64_t h) const {
    const int64_t qld = s.H * s.Dk, vld = s.H * s.Dv;
    const T* qh = Q.as<T>() + b * s.Sq * qld + h * s.Dk;
    const T* kh = K.as<T>() + b * s.Sk * qld + h * s.Dk;
    const T* vh = V.as<T>() + b * s.Sk * vld + h * s.Dv;
    T* yh = Y.mut<T>() + b * s.Sq * vld + h * s.Dv;
    // Scores in double: B(k, j) = Kh[j, k] is read through strides.
    std::vector<double> scores(static_cast<size_t>(s.Sq * s.Sk));
    naive_gemm<T>(s.Sq, s.Sk, s.Dk, qh, qld, 1, kh, 1, qld, scores.data());
    scale_mask_softmax<T, double>(s, mask, b, h, scores.data());
    for (int64_t i = 0; i < s.Sq; ++i) {
      const double* p = scores.data() + i * s.Sk;
      for (int64_t d = 0; d < s.Dv; ++d) {
        double acc = 0;
        for (int64_t j = 0; j < s.Sk; ++j) acc += p[j] * load_f64(vh, j * vld + d);
        yh[i * vld + d] = store_f64<T>(acc);
      }
    }
  }

  int64_t num_heads_;
  float scale_;
};

}  // namespace

Status fused_attention_check(const infer_node_view& node) {
  CPU_RETURN_IF_ERROR(check_input_count(node, 3, 4));
  for (size_t i = 0; i < node.num_inputs; ++i)
    CPU_RETURN_IF_ERROR(
        check_dtype(node, node.inputs[i], dtypes::kAllFloat, cat("input ", i).c_str()));
  const infer_attr_view* heads = sdk::find_attr(&node, "num_heads");
  if (heads == nullptr || heads->type != INFER_ATTR_INT)
    return unsupported(node_label(node), ": attribute 'num_heads' (int) is required");
  if (heads->i < 1)
    return unsupported(node_label(node), ": attribute 'num_heads' is ", heads->i,
                       ", expected 1 or more");
  const infer_attr_view* scale = sdk::find_attr(&node, "scale");
  if (scale == nullptr || scale->type != INFER_ATTR_FLOAT)
    return unsupported(node_label(node), ": attribute 'scale' (float) is required");
  // Static last dims must split into num_heads heads; dynamic ones are checked per run.
  static const char* const kNames[] = {"Q", "K", "V"};
  for (size_t i = 0; i < 3; ++i) {
    const infer_value_view* v = node_input(node, i);
    if (v->rank >= 0 && v->rank != 3)
      return unsupported(node_label(node), ": input ", kNames[i], " must be 3-D, got rank ",
                         v->rank);
    if (v->rank == 3 && v->dims[2] >= 0 && v->dims[2] % heads->i != 0)
      return unsupported(node_label(node), ": num_heads ", heads->i,
                         " does not divide the last dim ", v->dims[2], " of ", kNames[i]);
  }
  const infer_value_view* mask = node_input(node, 3);
  if (mask != nullptr && mask->rank > 4)
    return unsupported(node_label(node), ": mask must have rank 4 or less, got ", mask->rank);
  return Status::ok();
}

Result<KernelPtr> fused_attention_create(const KernelInit& init) {
  const infer_node_view& n = *init.node;
  return KernelPtr(
      new AttentionKernel(attr_i(n, "num_heads", 1), static_cast<float>(attr_f(n, "scale", 1.0))));
}

}  // namespace infer::cpu::kernels
