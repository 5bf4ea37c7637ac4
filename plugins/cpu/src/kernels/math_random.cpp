// Random generators: RandomUniform, RandomNormal (shape from the `shape` attribute),
// RandomUniformLike, RandomNormalLike (shape, and by default dtype, from the input) and
// Bernoulli (one draw per input probability).
//
// The generator is std::mt19937, whose sequence the C++ standard fixes, turned into
// doubles in [0, 1) with 53 random bits, and normals by the Box-Muller transform. With a
// `seed` attribute every run of the node gives the same values (the seed, truncated to an
// integer, seeds the engine), so a seeded model is reproducible across runs, threads and
// machines. Without one each run draws fresh values. The values cannot match another
// runtime's (or numpy's) sequence: ONNX leaves the generator unspecified.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "../node_util.hpp"
#include "math_common.hpp"

namespace infer::cpu::kernels {
namespace {

enum class RandomKind { kUniform, kNormal, kBernoulli };

constexpr uint32_t kFloatOut = dtypes::kAllFloat;
constexpr uint32_t kBernoulliOut = dtypes::kAllNum | dtypes::kBool;

// A double in [0, 1) from two 32-bit draws (53 random bits).
double unit(std::mt19937& g) {
  const uint32_t a = g() >> 5, b = g() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

template <typename T>
T random_from_double(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (is_float_v<T>)
    return from_compute<T>(static_cast<compute_t<T>>(v));
  else
    return static_cast<T>(v);  // Bernoulli only: v is 0 or 1
}

struct Config {
  RandomKind kind = RandomKind::kUniform;
  bool like = false;                           // shape (and default dtype) from input 0
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;   // UNDEFINED: the input's dtype
  Dims shape;                                  // when !like and kind != kBernoulli
  double a = 0, b = 1;                         // low/high or mean/scale
  bool seeded = false;
  uint32_t seed = 0;
};

class RandomKernel final : public Kernel {
 public:
  RandomKernel(Config cfg, uint64_t entropy) : cfg_(std::move(cfg)), entropy_(entropy) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* X = ctx.input(0);
    const bool from_input = cfg_.like || cfg_.kind == RandomKind::kBernoulli;
    if (from_input && X == nullptr) return invalid("input 0 is required");
    const Dims& dims = from_input ? X->dims : cfg_.shape;
    const infer_dtype out_dtype = cfg_.dtype != INFER_DTYPE_UNDEFINED ? cfg_.dtype : X->dtype;
    std::mt19937 gen = engine();
    if (cfg_.kind == RandomKind::kBernoulli) {
      return dispatch(X->dtype, dtypes::kAllFloat, "Bernoulli input", [&]<typename P>(Tag<P>) {
        return dispatch(out_dtype, kBernoulliOut, "Bernoulli output",
                        [&]<typename T>(Tag<T>) -> Status {
                          if constexpr (is_float_v<P>) {
                            CPU_ASSIGN_OR_RETURN(Tensor * Y,
                                                 ctx.allocate_output(0, out_dtype, dims));
                            const P* p = X->as<P>();
                            T* y = Y->mut<T>();
                            for (int64_t i = 0, n = Y->numel(); i < n; ++i) {
                              const double u = unit(gen);
                              y[i] =
                                  random_from_double<T>(u < static_cast<double>(to_compute(p[i])));
                            }
                            return Status::ok();
                          } else {
                            return internal("Bernoulli probabilities must be floats");
                          }
                        });
      });
    }
    return dispatch(
        out_dtype, kFloatOut, cfg_.kind == RandomKind::kNormal ? "RandomNormal" : "RandomUniform",
        [&]<typename T>(Tag<T>) -> Status {
          for (int64_t d : dims)
            if (d < 0) return invalid("shape ", dims_str(dims), " has a negative dim");
          CPU_ASSIGN_OR_RETURN(Tensor * Y, ctx.allocate_output(0, out_dtype, dims));
          T* y = Y->mut<T>();
          const int64_t n = Y->numel();
          if (cfg_.kind == RandomKind::kUniform) {
            for (int64_t i = 0; i < n; ++i)
              y[i] = random_from_double<T>(cfg_.a + (cfg_.b - cfg_.a) * unit(gen));
            return Status::ok();
          }
          // Box-Muller: each pair of uniforms gives two independent normals.
          constexpr double kTwoPi = 6.283185307179586476925286766559;
          for (int64_t i = 0; i < n; i += 2) {
            const double u1 = 1.0 - unit(gen);  // (0, 1]: log is finite
            const double u2 = unit(gen);
            const double r = std::sqrt(-2.0 * std::log(u1));
            y[i] = random_from_double<T>(cfg_.a + cfg_.b * r * std::cos(kTwoPi * u2));
            if (i + 1 < n)
              y[i + 1] = random_from_double<T>(cfg_.a + cfg_.b * r * std::sin(kTwoPi * u2));
          }
          return Status::ok();
        });
  }

 private:
  // Seeded: the same engine every run. Unseeded: a fresh seed per run from the kernel's
  // entropy and a run counter (run() may be called from several threads at once).
  std::mt19937 engine() const {
    if (cfg_.seeded) return std::mt19937(cfg_.seed);
    const uint64_t k = counter_.fetch_add(1, std::memory_order_relaxed);
    std::seed_seq seq{static_cast<uint32_t>(entropy_), static_cast<uint32_t>(entropy_ >> 32),
                      static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)};
    return std::mt19937(seq);
  }

  Config cfg_;
  uint64_t entropy_;
  mutable std::atomic<uint64_t> counter_{0};
};

bool op_is(const infer_node_view& n, const char* name) { return std::strcmp(n.op_type, name) == 0; }

Config config_of(const infer_node_view& n) {
  Config c;
  if (op_is(n, "Bernoulli")) {
    c.kind = RandomKind::kBernoulli;
  } else {
    c.kind = (op_is(n, "RandomNormal") || op_is(n, "RandomNormalLike")) ? RandomKind::kNormal
                                                                        : RandomKind::kUniform;
    c.like = op_is(n, "RandomUniformLike") || op_is(n, "RandomNormalLike");
    if (c.kind == RandomKind::kNormal) {
      c.a = attr_f(n, "mean", 0.0);
      c.b = attr_f(n, "scale", 1.0);
    } else {
      c.a = attr_f(n, "low", 0.0);
      c.b = attr_f(n, "high", 1.0);
    }
  }
  const bool dtype_from_input = c.like || c.kind == RandomKind::kBernoulli;
  if (has_attr(n, "dtype"))
    c.dtype = static_cast<infer_dtype>(attr_i(n, "dtype", INFER_DTYPE_FLOAT32));
  else if (!dtype_from_input)
    c.dtype = INFER_DTYPE_FLOAT32;
  c.shape = attr_ints(n, "shape");
  c.seeded = has_attr(n, "seed");
  if (c.seeded) c.seed = static_cast<uint32_t>(math::saturate_cast<int64_t>(attr_f(n, "seed", 0)));
  return c;
}

bool in(uint32_t mask, infer_dtype t) {
  return static_cast<uint32_t>(t) < 32 && (dtype_bit(t) & mask) != 0;
}

}  // namespace

Status random_check(const infer_node_view& node) {
  const Config c = config_of(node);
  const bool from_input = c.like || c.kind == RandomKind::kBernoulli;
  CPU_RETURN_IF_ERROR(check_input_count(node, from_input ? 1 : 0, from_input ? 1 : 0));
  const infer_value_view* x = node_input(node, 0);
  if (c.kind == RandomKind::kBernoulli)
    CPU_RETURN_IF_ERROR(check_dtype(node, x, dtypes::kAllFloat, "input 0"));
  const infer_dtype out = c.dtype != INFER_DTYPE_UNDEFINED ? c.dtype
                          : x != nullptr                   ? x->dtype
                                                           : INFER_DTYPE_UNDEFINED;
  const uint32_t allowed = c.kind == RandomKind::kBernoulli ? kBernoulliOut : kFloatOut;
  if (!in(allowed, out))
    return unsupported(node.op_type, " cannot produce dtype ", dtype_name(out));
  if (!from_input) {
    if (!has_attr(node, "shape")) return unsupported(node.op_type, " requires the 'shape' attribute");
    for (int64_t d : c.shape)
      if (d < 0) return unsupported(node.op_type, " shape has a negative dim ", d);
  }
  return Status::ok();
}

Result<KernelPtr> random_create(const KernelInit& init) {
  Config c = config_of(*init.node);
  uint64_t entropy = 0;
  if (!c.seeded) {
    // random_device may throw where no entropy source exists; the clock is a fallback.
    try {
      std::random_device rd;
      entropy = (static_cast<uint64_t>(rd()) << 32) | rd();
    } catch (...) {
      entropy = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
  }
  return KernelPtr(new RandomKernel(std::move(c), entropy));
}

}  // namespace infer::cpu::kernels
