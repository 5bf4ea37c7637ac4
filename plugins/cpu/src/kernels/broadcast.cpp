#include "broadcast.hpp"

namespace infer::cpu {

Result<BroadcastPlan> make_broadcast_plan_to(const std::vector<const Dims*>& inputs,
                                             const Dims& out_dims) {
  if (inputs.size() > 8) return internal("broadcast of more than 8 inputs");
  const size_t rank = out_dims.size();
  for (const Dims* d : inputs) {
    bool ok = d->size() <= rank;
    for (size_t i = 0; ok && i < d->size(); ++i) {
      int64_t v = (*d)[i], o = out_dims[rank - d->size() + i];
      ok = v == o || v == 1;
    }
    if (!ok) return invalid("shape ", dims_str(*d), " does not broadcast to ", dims_str(out_dims));
  }
  BroadcastPlan p;
  p.out_dims = out_dims;
  p.total = sdk::element_count(out_dims.data(), rank);
  // Per kept dim: the output size and, per input, whether it reads the dim (1) or
  // broadcasts it (0).
  std::vector<int64_t> sizes;
  std::vector<std::vector<char>> reads;  // [dim][input]
  for (size_t d = 0; d < rank; ++d) {
    if (out_dims[d] == 1) continue;
    std::vector<char> r(inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Dims& in = *inputs[k];
      size_t off = rank - in.size();
      r[k] = d >= off && in[d - off] != 1;
    }
    if (!sizes.empty() && reads.back() == r) {
      sizes.back() *= out_dims[d];
    } else {
      sizes.push_back(out_dims[d]);
      reads.push_back(std::move(r));
    }
  }
  if (sizes.empty()) {
    sizes.push_back(1);
    reads.push_back(std::vector<char>(inputs.size(), 0));
  }
  p.shape = sizes;
  p.strides.assign(inputs.size(), Dims(sizes.size(), 0));
  p.inner_step.assign(inputs.size(), 0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    int64_t stride = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (!reads[d][k]) continue;
      p.strides[k][d] = stride;
      stride *= sizes[d];
    }
    p.inner_step[k] = p.strides[k].back();
  }
  return p;
}

Result<BroadcastPlan> make_broadcast_plan(const std::vector<const Dims*>& inputs) {
  CPU_ASSIGN_OR_RETURN(Dims out, broadcast_shapes(inputs));
  return make_broadcast_plan_to(inputs, out);
}

}  // namespace infer::cpu
