#include "runtime/scheduler.hpp"

#include "runtime/run_state.hpp"

namespace infer::runtime {

Result<std::vector<Tensor>> Scheduler::run(const std::vector<const Tensor*>& inputs,
                                           RunStats* stats) const {
  // Shared: tasks and completion callbacks hold a reference, so the state outlives the
  // last of them even if they are still unwinding when this thread moves on.
  auto state = std::make_shared<RunState>(plan_, *arena_);
  Status status = state->bind_inputs(inputs);
  if (status.is_ok()) status = state->execute();
  Result<std::vector<Tensor>> outputs = status;
  if (status.is_ok()) outputs = state->collect_outputs(inputs);
  state->release_resources();
  if (stats != nullptr) {
    stats->copies = state->copies();
    stats->copy_bytes = state->copy_bytes();
  }
  return outputs;
}

}  // namespace infer::runtime
