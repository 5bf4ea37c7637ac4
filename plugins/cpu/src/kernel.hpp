// The kernel interface. A Kernel is created once per node at compile time (parsing its
// attributes and preparing constant data) and then run many times, possibly from several
// threads at once: run() is const and keeps all per-run state on the stack or in the
// KernelContext.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "infer/plugin.hpp"
#include "parallel.hpp"
#include "status.hpp"
#include "tensor.hpp"

namespace infer::cpu {

// What a kernel sees of one execution of its node.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  // Input i, or nullptr when it is omitted (or beyond the node's inputs).
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return num_outputs_; }
  // False for an omitted optional output: the kernel must not allocate it.
  virtual bool has_output(size_t i) const = 0;
  // Allocates output i with its final dtype and shape; data is uninitialized.
  virtual Result<Tensor*> allocate_output(size_t i, infer_dtype dtype, const Dims& dims) = 0;
  const sdk::Host& host() const { return *host_; }

  // Values the node's subgraphs (If/Loop/Scan bodies) read from enclosing graphs, in the
  // order of Kernel::captures(); nullptr beyond it. Other kernels have none.
  const Tensor* capture(size_t i) const { return i < captures_.size() ? captures_[i] : nullptr; }
  size_t num_captures() const { return captures_.size(); }
  // The run this execution belongs to (for the host's is_cancelled), or nullptr: control
  // flow kernels pass it on to the bodies they run so that long loops can be cancelled.
  const infer_run_context* run() const { return run_; }

  // Runs fn(begin, end) over [0, n) on the host's threads.
  template <typename F>
  void parallel_for(size_t n, size_t grain, F&& fn) const {
    cpu::parallel_for(*host_, n, grain, std::forward<F>(fn));
  }

 protected:
  KernelContext(const sdk::Host* host, std::vector<const Tensor*> inputs, size_t num_outputs)
      : host_(host), inputs_(std::move(inputs)), num_outputs_(num_outputs) {}
  void set_captures(std::vector<const Tensor*> captures) { captures_ = std::move(captures); }
  void set_run(const infer_run_context* run) { run_ = run; }

 private:
  const sdk::Host* host_;
  std::vector<const Tensor*> inputs_;
  size_t num_outputs_;
  std::vector<const Tensor*> captures_;
  const infer_run_context* run_ = nullptr;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Computes the outputs from the inputs. Errors name what is wrong, not the node: the
  // executable prefixes "node 'x' (Op): ".
  virtual Status run(KernelContext& ctx) const = 0;
  // Values that this node's subgraphs read from the enclosing graphs without them being
  // node inputs (ONNX's implicit inputs), identified by their view pointers, which the
  // ABI makes the same inside a body as in the graph that defines the value. The
  // executable binds each to the matching KernelContext::capture(). Constants are not
  // listed: bodies use them in place.
  virtual std::span<const infer_value_view* const> captures() const { return {}; }
};

// What a kernel's create function gets at compile time. `node` is valid only during the
// call, except const_data of its inputs, which outlives the executable's kernels.
struct KernelInit {
  const infer_node_view* node;
  const sdk::Host* host;
};

using KernelPtr = std::unique_ptr<Kernel>;

}  // namespace infer::cpu
