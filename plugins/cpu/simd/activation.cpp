// apply_activation dispatches to the vectorized variant of the requested ISA (the
// formulas, shared by every variant, are in vec_impl.hpp; their accuracy in vec.hpp).
#include "activation.hpp"

#include "vec_kernels.hpp"

namespace infer::cpu::simd {

void apply_activation(Isa isa, const Act& act, float* x, size_t n) {
  if (n > 0 && act.kind != ActKind::kNone) detail::vec_kernels(isa).activation(act, x, n);
}

}  // namespace infer::cpu::simd
