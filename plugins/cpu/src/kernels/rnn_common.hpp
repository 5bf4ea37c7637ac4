// What RNN, GRU and LSTM share: their attributes (direction, hidden_size, layout, clip,
// activation functions with their alpha/beta), the validation of their inputs, and the
// conversion of inputs and outputs between the tensors and one time-major working layout.
//
// Every cell runs in a compute type C (float for float16/float32, double for float64)
// over this working layout, whatever the node's layout attribute says:
//   X            [seq, batch, input]
//   W^T, R^T     per direction [input, G*hidden] and [hidden, G*hidden] (transposed so
//                that the products read rows: once at compile time for float32 constant
//                weights, else once per run)
//   Wb, Rb       per direction [G*hidden] (zeros when B is omitted)
//   initial h/c  [directions, batch, hidden] (zeros when omitted)
//   Y            [seq, directions, batch, hidden], zero past each sequence's length
//   Y_h, Y_c     [directions, batch, hidden]
// G is the number of gates (RNN 1, GRU 3, LSTM 4).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "../dispatch.hpp"
#include "../kernel.hpp"
#include "../node_util.hpp"
#include "gemm_core.hpp"

namespace infer::cpu::rnn {

// The dtypes of X, W, R, B, initial_h, initial_c and P.
constexpr uint32_t kRnnDtypes = dtypes::kF32 | dtypes::kF64 | dtypes::kF16;

// One activation function of a cell, with its alpha/beta.
struct Activation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  float alpha = 0;
  float beta = 0;

  // Applies the function in place to v[0..n), first clamping each element to
  // [-clip, clip] when clip > 0 (the cell clip applies to the inputs of activations).
  template <typename C>
  void apply(C* v, int64_t n, float clip) const {
    if (clip > 0) {
      const C lo = static_cast<C>(-clip), hi = static_cast<C>(clip);
      for (int64_t i = 0; i < n; ++i) v[i] = std::min(hi, std::max(lo, v[i]));
    }
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    const C zero = 0, one = 1;
    switch (kind) {
      case Kind::kRelu:
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] > zero ? v[i] : zero;
        break;
      case Kind::kTanh:
        for (int64_t i = 0; i < n; ++i) v[i] = std::tanh(v[i]);
        break;
      case Kind::kSigmoid:
        // Written so that neither branch overflows: exp of a non-positive number only.
        for (int64_t i = 0; i < n; ++i) {
          const C x = v[i];
          if (x >= zero) {
            v[i] = one / (one + std::exp(-x));
          } else {
            const C e = std::exp(x);
            v[i] = e / (one + e);
          }
        }
        break;
      case Kind::kAffine:
        for (int64_t i = 0; i < n; ++i) v[i] = a * v[i] + b;
        break;
      case Kind::kLeakyRelu:
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] >= zero ? v[i] : a * v[i];
        break;
      case Kind::kThresholdedRelu:
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] > a ? v[i] : zero;
        break;
      case Kind::kScaledTanh:
        for (int64_t i = 0; i < n; ++i) v[i] = a * std::tanh(b * v[i]);
        break;
      case Kind::kHardSigmoid:
        for (int64_t i = 0; i < n; ++i) v[i] = std::min(one, std::max(zero, a * v[i] + b));
        break;
      case Kind::kElu:
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] >= zero ? v[i] : a * std::expm1(v[i]);
        break;
      case Kind::kSoftsign:
        for (int64_t i = 0; i < n; ++i) v[i] = v[i] / (one + std::fabs(v[i]));
        break;
      case Kind::kSoftplus:
        for (int64_t i = 0; i < n; ++i) {
          const C x = v[i];
          v[i] = x > zero ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
        }
        break;
    }
  }
};

enum class Direction { kForward, kReverse, kBidirectional };

struct RnnAttrs {
  Direction direction = Direction::kForward;
  int64_t num_directions = 1;
  int64_t hidden_size = -1;  // -1: not given, taken from R
  int64_t layout = 0;
  float clip = 0;  // 0: no clip
  // activations_per_direction functions for the forward (or only) direction, then as
  // many for the reverse one when bidirectional.
  std::vector<Activation> activations;
  int64_t activations_per_direction = 1;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
};

// Reads and checks the attributes common to the three ops. `defaults` are the
// activation functions of one direction when the node gives none. Errors are
// UNSUPPORTED statuses naming the attribute ("LSTM direction 'up' is not ...").
Result<RnnAttrs> read_rnn_attrs(const infer_node_view& node,
                                std::initializer_list<const char*> defaults);

// The checks every cell's check function makes: input count, dtypes, attributes.
Status check_rnn_node(const infer_node_view& node, std::initializer_list<const char*> defaults,
                      size_t max_inputs);

// The sizes of one run.
struct RnnShape {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  int64_t gh() const { return gates * hidden; }
};

// The weights in the working layout (see the top of this file).
template <typename C>
struct RnnWeights {
  std::vector<C> wt, rt;  // [dirs][input or hidden][G*hidden]
  std::vector<C> wb, rb;  // [dirs][G*hidden]
  std::vector<C> p;       // [dirs][3*hidden] (LSTM peepholes), empty when omitted
};

// One run's inputs in the working layout (see the top of this file).
template <typename C>
struct RnnInputs {
  RnnShape s;
  std::vector<C> x;
  RnnWeights<C> own;  // converted for this run, unless the kernel prepared them
  const RnnWeights<C>* prepared = nullptr;  // the kernel's, converted once at compile time
  std::vector<C> h0, c0;                    // [dirs][batch][hidden]
  std::vector<int64_t> lens;                // [batch]
  const RnnWeights<C>& w() const { return prepared != nullptr ? *prepared : own; }
};

// One run's outputs in the working layout.
template <typename C>
struct RnnOutputs {
  std::vector<C> y, yh, yc;
  explicit RnnOutputs(const RnnShape& s, bool with_c)
      : y(static_cast<size_t>(s.seq * s.dirs * s.batch * s.hidden), C(0)),
        yh(static_cast<size_t>(s.dirs * s.batch * s.hidden), C(0)),
        yc(with_c ? yh.size() : 0, C(0)) {}
};

// Shape checks of the run-time tensors. `gates` is G; `lstm` admits initial_c and P.
// Errors name the input, its shape and the shape expected.
Result<RnnShape> check_rnn_shapes(const KernelContext& ctx, const RnnAttrs& a, int64_t gates,
                                  bool lstm);

// Reads sequence_lens (or seq for every batch entry when omitted), checking each length
// is within [0, seq].
Result<std::vector<int64_t>> read_sequence_lens(const KernelContext& ctx, const RnnShape& s);

namespace detail {

template <typename T, typename C>
void convert(const T* p, int64_t n, std::vector<C>* out) {
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = static_cast<C>(to_compute(p[i]));
}

// Reads a per-direction state ([dirs, batch, hidden] in layout 0, [batch, dirs, hidden]
// in layout 1) into [dirs, batch, hidden]; zeros when the input is omitted.
template <typename T, typename C>
void read_state(const Tensor* t, const RnnShape& s, int64_t layout, std::vector<C>* out) {
  out->assign(static_cast<size_t>(s.dirs * s.batch * s.hidden), C(0));
  if (t == nullptr) return;
  const T* p = t->as<T>();
  for (int64_t d = 0; d < s.dirs; ++d)
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t src = layout == 0 ? (d * s.batch + b) : (b * s.dirs + d);
      for (int64_t j = 0; j < s.hidden; ++j)
        (*out)[static_cast<size_t>((d * s.batch + b) * s.hidden + j)] =
            static_cast<C>(to_compute(p[src * s.hidden + j]));
    }
}

// Writes a [dirs, batch, hidden] state to output `index` in the node's layout.
template <typename T, typename C>
Status write_state(KernelContext& ctx, size_t index, const std::vector<C>& v, const RnnShape& s,
                   int64_t layout, infer_dtype dtype) {
  if (!ctx.has_output(index)) return Status::ok();
  const Dims dims = layout == 0 ? Dims{s.dirs, s.batch, s.hidden} : Dims{s.batch, s.dirs, s.hidden};
  CPU_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(index, dtype, dims));
  T* p = out->mut<T>();
  for (int64_t d = 0; d < s.dirs; ++d)
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t dst = layout == 0 ? (d * s.batch + b) : (b * s.dirs + d);
      for (int64_t j = 0; j < s.hidden; ++j)
        p[dst * s.hidden + j] = from_compute<T>(
            static_cast<compute_t<T>>(v[static_cast<size_t>((d * s.batch + b) * s.hidden + j)]));
    }
  return Status::ok();
}

// dst[c, r] = src[r, c] for one rows x cols matrix.
template <typename C>
void transpose(const C* src, int64_t rows, int64_t cols, C* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

}  // namespace detail

// out[M, N] (+)= A[M, K] * B[K, N], all row-major with leading dimensions.
template <typename C>
void rnn_gemm(const sdk::Host& host, int64_t M, int64_t N, int64_t K, const C* A, int64_t lda,
              const C* B, int64_t ldb, C* out, int64_t ldc, bool accumulate) {
  if constexpr (std::is_same_v<C, float>) {
    GemmArgs g;
    g.M = M;
    g.N = N;
    g.K = K;
    g.A = A;
    g.a_row_stride = lda;
    g.a_col_stride = 1;
    g.B = B;
    g.ldb = ldb;
    g.C = out;
    g.ldc = ldc;
    g.accumulate = accumulate;
    sgemm(host, g);
  } else {
    (void)host;
    for (int64_t i = 0; i < M; ++i) {
      C* c = out + i * ldc;
      if (!accumulate) std::fill(c, c + N, C(0));
      for (int64_t k = 0; k < K; ++k) {
        const C a = A[i * lda + k];
        const C* b = B + k * ldb;
        for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
      }
    }
  }
}

// Converts W [dirs, G*hidden, input], R [dirs, G*hidden, hidden], B [dirs, 2*G*hidden]
// (nullptr: zeros) and P [dirs, 3*hidden] (nullptr: none) of the sizes `s` gives into the
// working layout.
template <typename T, typename C>
void load_rnn_weights(const T* W, const T* R, const T* B, const T* P, const RnnShape& s,
                      RnnWeights<C>* w) {
  std::vector<C> tmp;
  const int64_t gh = s.gh();
  detail::convert<T>(W, s.dirs * gh * s.input, &tmp);
  w->wt.resize(static_cast<size_t>(s.dirs * s.input * gh));
  for (int64_t d = 0; d < s.dirs; ++d)
    detail::transpose(tmp.data() + d * gh * s.input, gh, s.input, w->wt.data() + d * s.input * gh);
  detail::convert<T>(R, s.dirs * gh * s.hidden, &tmp);
  w->rt.resize(static_cast<size_t>(s.dirs * s.hidden * gh));
  for (int64_t d = 0; d < s.dirs; ++d)
    detail::transpose(tmp.data() + d * gh * s.hidden, gh, s.hidden,
                      w->rt.data() + d * s.hidden * gh);
  w->wb.assign(static_cast<size_t>(s.dirs * gh), C(0));
  w->rb.assign(static_cast<size_t>(s.dirs * gh), C(0));
  if (B != nullptr) {
    detail::convert<T>(B, s.dirs * 2 * gh, &tmp);
    for (int64_t d = 0; d < s.dirs; ++d)
      for (int64_t k = 0; k < gh; ++k) {
        w->wb[static_cast<size_t>(d * gh + k)] = tmp[static_cast<size_t>(d * 2 * gh + k)];
        w->rb[static_cast<size_t>(d * gh + k)] = tmp[static_cast<size_t>(d * 2 * gh + gh + k)];
      }
  }
  w->p.clear();
  if (P != nullptr) detail::convert<T>(P, s.dirs * 3 * s.hidden, &w->p);
}

// The weights of a node whose W, R and (when given) B and P are float32 constants,
// converted once at compile time; nullptr otherwise (they are then converted each run).
// `gates` is G; `lstm` admits P.
std::shared_ptr<const RnnWeights<float>> prepare_rnn_weights(const infer_node_view& node,
                                                             int64_t gates, bool lstm);

// Validates the run's tensors and converts them to the working layout, using `prepared`
// weights when given. `gates` is G; `lstm` reads initial_c (input 6) and P (input 7).
template <typename T>
Result<RnnInputs<compute_t<T>>> load_rnn_inputs(
    const KernelContext& ctx, const RnnAttrs& a, int64_t gates, bool lstm,
    const RnnWeights<compute_t<T>>* prepared = nullptr) {
  using C = compute_t<T>;
  RnnInputs<C> in;
  CPU_ASSIGN_OR_RETURN(in.s, check_rnn_shapes(ctx, a, gates, lstm));
  const RnnShape& s = in.s;
  CPU_ASSIGN_OR_RETURN(in.lens, read_sequence_lens(ctx, s));
  const Tensor& X = *ctx.input(0);
  const T* x = X.as<T>();
  in.x.resize(static_cast<size_t>(s.seq * s.batch * s.input));
  for (int64_t t = 0; t < s.seq; ++t)
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t src = a.layout == 0 ? (t * s.batch + b) : (b * s.seq + t);
      for (int64_t i = 0; i < s.input; ++i)
        in.x[static_cast<size_t>((t * s.batch + b) * s.input + i)] =
            static_cast<C>(to_compute(x[src * s.input + i]));
    }
  if (prepared == nullptr) {
    const Tensor* B = ctx.input(3);
    const Tensor* P = lstm ? ctx.input(7) : nullptr;
    load_rnn_weights<T>(ctx.input(1)->as<T>(), ctx.input(2)->as<T>(),
                        B != nullptr ? B->as<T>() : nullptr, P != nullptr ? P->as<T>() : nullptr, s,
                        &in.own);
  }
  in.prepared = prepared;
  detail::read_state<T>(ctx.input(5), s, a.layout, &in.h0);
  if (lstm) detail::read_state<T>(ctx.input(6), s, a.layout, &in.c0);
  return in;
}

// X * W^T + biases for every step and batch entry of direction d: [seq*batch, G*hidden]
// rows in the working layout's (t, b) order. Wb is added to every gate, Rb to the first
// `rb_gates` gates only (GRU keeps the hidden gate's Rb apart because of the reset gate).
template <typename C>
std::vector<C> input_projection(const sdk::Host& host, const RnnInputs<C>& in, int64_t d,
                                int64_t rb_gates) {
  const RnnShape& s = in.s;
  const int64_t gh = s.gh(), rows = s.seq * s.batch;
  std::vector<C> xw(static_cast<size_t>(rows * gh));
  const RnnWeights<C>& w = in.w();
  rnn_gemm<C>(host, rows, gh, s.input, in.x.data(), s.input, w.wt.data() + d * s.input * gh, gh,
              xw.data(), gh, false);
  std::vector<C> bias(static_cast<size_t>(gh));
  for (int64_t k = 0; k < gh; ++k)
    bias[static_cast<size_t>(k)] =
        w.wb[static_cast<size_t>(d * gh + k)] +
        (k < rb_gates * s.hidden ? w.rb[static_cast<size_t>(d * gh + k)] : C(0));
  for (int64_t r = 0; r < rows; ++r) {
    C* row = xw.data() + r * gh;
    for (int64_t k = 0; k < gh; ++k) row[k] += bias[static_cast<size_t>(k)];
  }
  return xw;
}

// The time index batch entry b reads at step `step` of direction d (forward: step;
// reverse: counted back from the entry's last valid step), or -1 past its length.
inline int64_t step_time(const RnnAttrs& a, const std::vector<int64_t>& lens, int64_t d, int64_t b,
                         int64_t step) {
  const int64_t len = lens[static_cast<size_t>(b)];
  if (step >= len) return -1;
  const bool reverse = a.direction == Direction::kReverse || d == 1;
  return reverse ? len - 1 - step : step;
}

// Writes Y (output 0), Y_h (1) and, for LSTM, Y_c (2) in the node's layout and dtype.
template <typename T>
Status write_rnn_outputs(KernelContext& ctx, const RnnAttrs& a, const RnnShape& s,
                         const RnnOutputs<compute_t<T>>& out, infer_dtype dtype) {
  if (ctx.has_output(0)) {
    const Dims dims = a.layout == 0 ? Dims{s.seq, s.dirs, s.batch, s.hidden}
                                    : Dims{s.batch, s.seq, s.dirs, s.hidden};
    CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, dtype, dims));
    T* p = Y->mut<T>();
    for (int64_t t = 0; t < s.seq; ++t)
      for (int64_t d = 0; d < s.dirs; ++d)
        for (int64_t b = 0; b < s.batch; ++b) {
          const int64_t src = ((t * s.dirs + d) * s.batch + b) * s.hidden;
          const int64_t dst =
              (a.layout == 0 ? ((t * s.dirs + d) * s.batch + b) : ((b * s.seq + t) * s.dirs + d)) *
              s.hidden;
          for (int64_t j = 0; j < s.hidden; ++j)
            p[dst + j] =
                from_compute<T>(static_cast<compute_t<T>>(out.y[static_cast<size_t>(src + j)]));
        }
  }
  CPU_RETURN_IF_ERROR(detail::write_state<T>(ctx, 1, out.yh, s, a.layout, dtype));
  if (!out.yc.empty())
    CPU_RETURN_IF_ERROR(detail::write_state<T>(ctx, 2, out.yc, s, a.layout, dtype));
  return Status::ok();
}

// The run() every kernel of the family shares: dispatch on X's float dtype, load the
// inputs (`gates` blocks per direction; LSTM's cell state), run each direction with the
// cell's own code (Cell::direction<C>), write the outputs.
template <typename Cell>
class RnnKernelBase : public Kernel {
 public:
  RnnKernelBase(const infer_node_view& node, RnnAttrs attrs, const char* op, int64_t gates,
                bool cell_state)
      : a_(std::move(attrs)),
        op_(op),
        gates_(gates),
        cell_state_(cell_state),
        prepared_(prepare_rnn_weights(node, gates, cell_state)) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    if (X == nullptr) return invalid("input X is required");
    return dispatch(X->dtype, kRnnDtypes, op_, [&]<typename T>(Tag<T>) -> Status {
      if constexpr (is_float_v<T>) {
        using C = compute_t<T>;
        const RnnWeights<C>* prepared = nullptr;
        if constexpr (std::is_same_v<T, float>) prepared = prepared_.get();
        CPU_ASSIGN_OR_RETURN(RnnInputs<C> in,
                             load_rnn_inputs<T>(ctx, a_, gates_, cell_state_, prepared));
        RnnOutputs<C> out(in.s, cell_state_);
        for (int64_t d = 0; d < in.s.dirs; ++d)
          static_cast<const Cell*>(this)->template direction<C>(ctx, in, d, &out);
        return write_rnn_outputs<T>(ctx, a_, in.s, out, X->dtype);
      } else {
        return internal(std::string(op_) + ": not a float type");
      }
    });
  }

 protected:
  RnnAttrs a_;

 private:
  const char* op_;
  int64_t gates_;
  bool cell_state_;
  std::shared_ptr<const RnnWeights<float>> prepared_;  // float32 constant weights, or null
};

}  // namespace infer::cpu::rnn
