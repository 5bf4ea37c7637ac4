// LSTM (opsets 1-21): gates i, o, f, c in that order in W, R and B; optional peepholes P
// (i, o, f), input_forget (f = 1 - i), clip, per-direction activations f, g, h, sequence
// lengths, initial states and layout 1. Each step multiplies the previous hidden state by
// R^T for the whole batch; the input projection X * W^T is done once for all steps.
#include "rnn_common.hpp"

namespace infer::cpu::kernels {
namespace {

using namespace rnn;  // NOLINT: the cell code reads better with short names

constexpr std::initializer_list<const char*> kLstmDefaults = {"Sigmoid", "Tanh", "Tanh"};

class LstmKernel final : public RnnKernelBase<LstmKernel> {
 public:
  LstmKernel(const infer_node_view& node, RnnAttrs attrs)
      : RnnKernelBase(node, std::move(attrs), "LSTM", 4, true) {}

  // Called by RnnKernelBase::run for each direction.
  template <typename C>
  void direction(const KernelContext& ctx, const RnnInputs<C>& in, int64_t d,
                 RnnOutputs<C>* out) const {
    const RnnShape& s = in.s;
    const int64_t H = s.hidden, gh = s.gh();
    const std::vector<C> xw = input_projection(ctx.host(), in, d, 4);
    const rnn::Activation& f = a_.activations[static_cast<size_t>(d * 3)];
    const rnn::Activation& g = a_.activations[static_cast<size_t>(d * 3 + 1)];
    const rnn::Activation& h = a_.activations[static_cast<size_t>(d * 3 + 2)];
    const C* p = in.w().p.empty() ? nullptr : in.w().p.data() + d * 3 * H;
    const C* rt = in.w().rt.data() + d * H * gh;
    // The running states, [batch, hidden].
    std::vector<C> ht(in.h0.begin() + d * s.batch * H, in.h0.begin() + (d + 1) * s.batch * H);
    std::vector<C> ct(in.c0.begin() + d * s.batch * H, in.c0.begin() + (d + 1) * s.batch * H);
    std::vector<C> gates(static_cast<size_t>(s.batch * gh), C(0));
    std::vector<C> tmp(static_cast<size_t>(H));
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
      rnn_gemm<C>(ctx.host(), s.batch, gh, H, ht.data(), H, rt, gh, gates.data(), gh, true);
      for (int64_t b = 0; b < s.batch; ++b) {
        const int64_t t = time[static_cast<size_t>(b)];
        if (t < 0) continue;  // past this sequence's end: the state stays as it was
        C* gi = gates.data() + b * gh;
        C* go = gi + H;
        C* gf = gi + 2 * H;
        C* gc = gi + 3 * H;
        C* c = ct.data() + b * H;
        C* hb = ht.data() + b * H;
        if (p != nullptr)
          for (int64_t j = 0; j < H; ++j) {
            gi[j] += p[j] * c[j];
            gf[j] += p[2 * H + j] * c[j];
          }
        f.apply(gi, H, a_.clip);
        if (a_.input_forget) {
          for (int64_t j = 0; j < H; ++j) gf[j] = C(1) - gi[j];
        } else {
          f.apply(gf, H, a_.clip);
        }
        g.apply(gc, H, a_.clip);
        for (int64_t j = 0; j < H; ++j) c[j] = gf[j] * c[j] + gi[j] * gc[j];
        if (p != nullptr)
          for (int64_t j = 0; j < H; ++j) go[j] += p[H + j] * c[j];
        f.apply(go, H, a_.clip);
        // The clip bounds the input of h too (a copy: the cell state itself is kept).
        std::copy_n(c, H, tmp.data());
        h.apply(tmp.data(), H, a_.clip);
        C* y = out->y.data() + ((t * s.dirs + d) * s.batch + b) * H;
        for (int64_t j = 0; j < H; ++j) y[j] = hb[j] = go[j] * tmp[static_cast<size_t>(j)];
      }
    }
    // A sequence of length 0 has no step to take its state from: its Y_h and Y_c are 0.
    for (int64_t b = 0; b < s.batch; ++b) {
      if (in.lens[static_cast<size_t>(b)] == 0) continue;
      std::copy_n(ht.data() + b * H, H, out->yh.data() + (d * s.batch + b) * H);
      std::copy_n(ct.data() + b * H, H, out->yc.data() + (d * s.batch + b) * H);
    }
  }
};

}  // namespace

Status rnn_lstm_check(const infer_node_view& node) {
  return check_rnn_node(node, kLstmDefaults, 8);
}

Result<KernelPtr> rnn_lstm_create(const KernelInit& init) {
  CPU_ASSIGN_OR_RETURN(RnnAttrs a, read_rnn_attrs(*init.node, kLstmDefaults));
  return KernelPtr(new LstmKernel(*init.node, std::move(a)));
}

}  // namespace infer::cpu::kernels
