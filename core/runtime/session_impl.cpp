#include "runtime/session_impl.hpp"

#include <chrono>
#include <exception>
#include <new>

#include "runtime/input_validation.hpp"

namespace infer::runtime {

SessionImpl::SessionImpl(Parts parts)
    : arena_(std::move(parts.arena)),
      backends_(std::move(parts.backends)),
      plan_(std::move(parts.plan)),
      log_(std::move(parts.log_sink), parts.log_level),
      trace_(parts.trace_path.empty() ? nullptr
                                      : std::make_unique<TraceRecorder>(parts.trace_path)),
      scheduler_(*plan_, arena_,
                 Scheduler::Options{static_cast<size_t>(parts.micro_batches), trace_.get()}),
      inputs_(std::move(parts.inputs)),
      outputs_(std::move(parts.outputs)),
      report_(std::move(parts.report)),
      active_(std::move(parts.active_backends)) {}

SessionImpl::~SessionImpl() {
  // Runs recorded since the last write_trace would otherwise be lost; a destructor
  // cannot return the failure, so it goes to the log.
  if (trace_ && trace_->dirty()) {
    try {
      Status written = trace_->write();
      if (!written.is_ok()) log_.log(LogLevel::kWarning, written.message());
    } catch (const std::exception& e) {
      log_.log(LogLevel::kWarning, std::string("trace: ") + e.what());
    }
  }
}

Status SessionImpl::write_trace() {
  if (!trace_) return invalid_argument("write_trace: no trace_path was set");
  try {
    return trace_->write();
  } catch (const std::bad_alloc&) {
    return unavailable("trace: out of host memory");
  } catch (const std::exception& e) {
    return internal_error(std::string("trace: unexpected exception: ") + e.what());
  }
}

Result<std::vector<NamedTensor>> SessionImpl::run(const std::vector<NamedTensor>& inputs,
                                                  RunStats* stats) {
  try {
    const auto start = std::chrono::steady_clock::now();
    INFER_ASSIGN_OR_RETURN(std::vector<const Tensor*> ordered, validate_inputs(inputs_, inputs));
    RunStats local;
    INFER_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, scheduler_.run(ordered, &local));
    std::vector<NamedTensor> out;
    out.reserve(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i)
      out.push_back(NamedTensor{outputs_[i].name, std::move(tensors[i])});
    local.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (stats != nullptr) *stats = local;
    return out;
  } catch (const std::bad_alloc&) {
    return unavailable("run: out of host memory");
  } catch (const std::exception& e) {
    return internal_error(std::string("run: unexpected exception: ") + e.what());
  }
}

}  // namespace infer::runtime
