// GRU (opsets 1-21): gates z, r, h in that order in W, R and B; linear_before_reset,
// clip, per-direction activations f, g, sequence lengths, initial state and layout 1.
//   z = f(x Wz + h Rz + Wbz + Rbz),  r = f(x Wr + h Rr + Wbr + Rbr)
//   linear_before_reset = 0:  n = g(x Wh + (r . h) Rh + Rbh + Wbh)
//   linear_before_reset = 1:  n = g(x Wh + r . (h Rh + Rbh) + Wbh)
//   h' = (1 - z) . n + z . h
#include "rnn_common.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace rnn;  // NOLINT: the cell code reads better with short names

constexpr std::initializer_list<const char*> kGruDefaults = {"Sigmoid", "Tanh"};

class GruKernel final : public RnnKernelBase<GruKernel> {
 public:
  GruKernel(const infer_node_view& node, RnnAttrs attrs)
      : RnnKernelBase(node, std::move(attrs), "GRU", 3, false) {}

  // Called by RnnKernelBase::run for each direction.
  template <typename C>
  void direction(const KernelContext& ctx, const RnnInputs<C>& in, int64_t d,
                 RnnOutputs<C>* out) const {
    const RnnShape& s = in.s;
    const int64_t H = s.hidden, gh = s.gh();
    // Rb of z and r joins the input projection; Rbh stays apart (it sits inside the reset
    // product when linear_before_reset is set).
    const std::vector<C> xw = input_projection(ctx.host(), in, d, 2);
    const C* rbh = in.w().rb.data() + d * gh + 2 * H;
    const rnn::Activation& f = a_.activations[static_cast<size_t>(d * 2)];
    const rnn::Activation& g = a_.activations[static_cast<size_t>(d * 2 + 1)];
    const C* rt = in.w().rt.data() + d * H * gh;
    std::vector<C> ht(in.h0.begin() + d * s.batch * H, in.h0.begin() + (d + 1) * s.batch * H);
    std::vector<C> gates(static_cast<size_t>(s.batch * gh), C(0));
    // linear_before_reset: h Rh^T; otherwise (r . h), both [batch, hidden].
    std::vector<C> aux(static_cast<size_t>(s.batch * H), C(0));
    std::vector<int64_t> time(static_cast<size_t>(s.batch));
    for (int64_t step = 0; step < s.seq; ++step) {
      bool any = false;
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t t = step_time(a_, in.lens, d, b, step);
        time[static_cast<size_t>(b)] = t;
        if (t < 0) continue;
        any = true;
        std::copy_n(xw.data() + (t * s.batch + b) * gh, gh, gates.data() + b * gh);
      }
      if (!any) break;  // every sequence has ended
      // z and r: add h R[z,r]^T, then activate.
      rnn_gemm<C>(ctx.host(), s.batch, 2 * H, H, ht.data(), H, rt, gh, gates.data(), gh, true);
      for (int64_t b = 0; b < s.batch; ++b) {
        if (time[static_cast<size_t>(b)] < 0) continue;
        f.apply(gates.data() + b * gh, 2 * H, a_.clip);
      }
      if (a_.linear_before_reset) {
        rnn_gemm<C>(ctx.host(), s.batch, H, H, ht.data(), H, rt + 2 * H, gh, aux.data(), H, false);
        for (int64_t b = 0; b < s.batch; ++b) {
          if (time[static_cast<size_t>(b)] < 0) continue;
          const C* r = gates.data() + b * gh + H;
          C* n = gates.data() + b * gh + 2 * H;
          const C* hr = aux.data() + b * H;
          for (int64_t j = 0; j < H; ++j) n[j] += r[j] * (hr[j] + rbh[j]);
        }
      } else {
        for (int64_t b = 0; b < s.batch; ++b) {
          const C* r = gates.data() + b * gh + H;
          const C* hb = ht.data() + b * H;
          C* rh = aux.data() + b * H;
          if (time[static_cast<size_t>(b)] < 0) {
            std::fill_n(rh, H, C(0));
            continue;
          }
          for (int64_t j = 0; j < H; ++j) rh[j] = r[j] * hb[j];
        }
        rnn_gemm<C>(ctx.host(), s.batch, H, H, aux.data(), H, rt + 2 * H, gh, gates.data() + 2 * H,
                    gh, true);
        for (int64_t b = 0; b < s.batch; ++b) {
          C* n = gates.data() + b * gh + 2 * H;
          for (int64_t j = 0; j < H; ++j) n[j] += rbh[j];
        }
      }
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t t = time[static_cast<size_t>(b)];
        if (t < 0) continue;  // past this sequence's end: the state stays as it was
        const C* z = gates.data() + b * gh;
        C* n = gates.data() + b * gh + 2 * H;
        g.apply(n, H, a_.clip);
        C* hb = ht.data() + b * H;
        C* y = out->y.data() + ((t * s.dirs + d) * s.batch + b) * H;
        for (int64_t j = 0; j < H; ++j) y[j] = hb[j] = (C(1) - z[j]) * n[j] + z[j] * hb[j];
      }
    }
    // A sequence of length 0 has no step to take its state from: its Y_h is 0.
    for (int64_t b = 0; b < s.batch; ++b) {
      if (in.lens[static_cast<size_t>(b)] == 0) continue;
      std::copy_n(ht.data() + b * H, H, out->yh.data() + (d * s.batch + b) * H);
    }
  }
};

}  // namespace

Status rnn_gru_check(const infer_node_view& node) { return check_rnn_node(node, kGruDefaults, 6); }

Result<KernelPtr> rnn_gru_create(const KernelInit& init) {
  CPU_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(*init.node, kGruDefaults));
  return KernelPtr(new GruKernel(*init.node, std::move(a)));
}

}  // namespace infer::cpu::kernels
