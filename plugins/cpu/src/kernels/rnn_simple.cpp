// RNN (opsets 1-21): h' = f(x Wi^T + h Ri^T + Wbi + Rbi), with clip, one activation per
// direction, sequence lengths, initial state and layout 1.
#include "rnn_common.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace rnn;  // NOLINT: the cell code reads better with short names

constexpr std::initializer_list<const char*> kRnnDefaults = {"Tanh"};

class SimpleRnnKernel final : public RnnKernelBase<SimpleRnnKernel> {
 public:
  SimpleRnnKernel(const infer_node_view& node, RnnAttrs attrs)
      : RnnKernelBase(node, std::move(attrs), "RNN", 1, false) {}

  // Called by RnnKernelBase::run for each direction.
  template <typename C>
  void direction(const KernelContext& ctx, const RnnInputs<C>& in, int64_t d,
                 RnnOutputs<C>* out) const {
    const RnnShape& s = in.s;
    const int64_t H = s.hidden;
    const std::vector<C> xw = input_projection(ctx.host(), in, d, 1);
    const rnn::Activation& f = a_.activations[static_cast<size_t>(d)];
    const C* rt = in.w().rt.data() + d * H * H;
    std::vector<C> ht(in.h0.begin() + d * s.batch * H, in.h0.begin() + (d + 1) * s.batch * H);
    std::vector<C> gates(static_cast<size_t>(s.batch * H), C(0));
    std::vector<int64_t> time(static_cast<size_t>(s.batch));
    for (int64_t step = 0; step < s.seq; ++step) {
      bool any = false;
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t t = step_time(a_, in.lens, d, b, step);
        time[static_cast<size_t>(b)] = t;
        if (t < 0) continue;
        any = true;
        std::copy_n(xw.data() + (t * s.batch + b) * H, H, gates.data() + b * H);
      }
      if (!any) break;  // every sequence has ended
      rnn_gemm<C>(ctx.host(), s.batch, H, H, ht.data(), H, rt, H, gates.data(), H, true);
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t t = time[static_cast<size_t>(b)];
        if (t < 0) continue;  // past this sequence's end: the state stays as it was
        C* gb = gates.data() + b * H;
        f.apply(gb, H, a_.clip);
        std::copy_n(gb, H, ht.data() + b * H);
        std::copy_n(gb, H, out->y.data() + ((t * s.dirs + d) * s.batch + b) * H);
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

Status rnn_simple_check(const infer_node_view& node) {
  return check_rnn_node(node, kRnnDefaults, 6);
}

Result<KernelPtr> rnn_simple_create(const KernelInit& init) {
  CPU_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(*init.node, kRnnDefaults));
  return KernelPtr(new SimpleRnnKernel(*init.node, std::move(a)));
}

}  // namespace infer::cpu::kernels
