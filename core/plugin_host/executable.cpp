#include "plugin_host/executable.hpp"

#include <exception>
#include <utility>

#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/status_bridge.hpp"
#include "plugin_host/stream.hpp"

namespace infer::host {
namespace {

struct AllocContext {
  const OutputAllocator* alloc = nullptr;
  size_t num_outputs = 0;
};

// The C output allocator handed to execute; forwards to the caller's std::function.
infer_status* alloc_trampoline(void* alloc_ctx, size_t index, infer_dtype dtype, size_t rank,
                               const int64_t* dims, infer_tensor* out) {
  auto* ctx = static_cast<AllocContext*>(alloc_ctx);
  if (ctx == nullptr || out == nullptr) {
    return make_status(INFER_STATUS_INVALID_ARGUMENT, "alloc_output: no output tensor to fill");
  }
  if (index >= ctx->num_outputs) {
    return make_status(INFER_STATUS_INVALID_ARGUMENT,
                       "alloc_output: output index " + std::to_string(index) + " out of range (" +
                           std::to_string(ctx->num_outputs) + " outputs)");
  }
  if (rank > 0 && dims == nullptr) {
    return make_status(INFER_STATUS_INVALID_ARGUMENT, "alloc_output: rank > 0 but dims is NULL");
  }
  if (ctx->alloc == nullptr || !*ctx->alloc) {
    return make_status(INFER_STATUS_INTERNAL, "alloc_output: the host gave no output allocator");
  }
  try {
    out->struct_size = sizeof(infer_tensor);
    std::span<const int64_t> shape(dims, rank);
    return make_status((*ctx->alloc)(index, dtype, shape, out));
  } catch (const std::exception& e) {
    return make_status(INFER_STATUS_INTERNAL, std::string("alloc_output threw: ") + e.what());
  } catch (...) {
    return make_status(INFER_STATUS_INTERNAL, "alloc_output threw an exception of unknown type");
  }
}

}  // namespace

Executable::Executable(std::shared_ptr<const PluginInstance> owner, infer_executable* executable,
                       std::string name, size_t num_inputs, size_t num_outputs,
                       std::vector<std::shared_ptr<const void>> keep_alive)
    : owner_(std::move(owner)),
      executable_(executable),
      name_(std::move(name)),
      num_inputs_(num_inputs),
      num_outputs_(num_outputs),
      keep_alive_(std::move(keep_alive)) {}

Executable::Executable(Executable&& other) noexcept
    : owner_(std::move(other.owner_)),
      executable_(std::exchange(other.executable_, nullptr)),
      name_(std::move(other.name_)),
      num_inputs_(std::exchange(other.num_inputs_, 0)),
      num_outputs_(std::exchange(other.num_outputs_, 0)),
      keep_alive_(std::move(other.keep_alive_)) {}

Executable& Executable::operator=(Executable&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::move(other.owner_);
    executable_ = std::exchange(other.executable_, nullptr);
    name_ = std::move(other.name_);
    num_inputs_ = std::exchange(other.num_inputs_, 0);
    num_outputs_ = std::exchange(other.num_outputs_, 0);
    keep_alive_ = std::move(other.keep_alive_);
  }
  return *this;
}

Executable::~Executable() { reset(); }

void Executable::reset() {
  // The plugin may use constants in place until executable_destroy returns, so what
  // keeps them alive is released only afterwards.
  if (executable_ != nullptr) owner_->api().executable_destroy(executable_);
  executable_ = nullptr;
  keep_alive_.clear();
  owner_.reset();
}

Status Executable::execute(const Stream& stream, const ExecuteArgs& args) const {
  if (executable_ == nullptr) return invalid_argument("execute on an empty executable handle");
  if (!stream.valid())
    return invalid_argument("executable '" + name_ + "': execute on an empty stream");
  if (args.inputs.size() != num_inputs_) {
    return invalid_argument("executable '" + name_ + "': got " +
                            std::to_string(args.inputs.size()) +
                            " inputs, the compiled partition has " + std::to_string(num_inputs_));
  }
  if (num_outputs_ > 0 && !args.alloc_output) {
    return invalid_argument("executable '" + name_ + "': execute without an output allocator");
  }
  std::vector<infer_tensor> inputs(args.inputs.begin(), args.inputs.end());
  for (auto& t : inputs) t.struct_size = sizeof(infer_tensor);
  AllocContext ctx{&args.alloc_output, num_outputs_};
  infer_execute_args a{};
  a.struct_size = sizeof(a);
  a.num_inputs = inputs.size();
  a.inputs = inputs.data();
  a.num_outputs = num_outputs_;
  a.alloc_output = alloc_trampoline;
  a.alloc_ctx = &ctx;
  a.num_waits = args.waits.size();
  a.waits = args.waits.data();
  a.num_signals = args.signals.size();
  a.signals = args.signals.data();
  a.run = args.run;
  return take_status(owner_->api().execute(executable_, stream.raw(), &a),
                     "plugin '" + owner_->name() + "': execute of '" + name_ + "'");
}

}  // namespace infer::host
