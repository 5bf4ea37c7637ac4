// What the control-flow kernels (If, Loop, Scan) share: compiling a body graph attribute
// with the executable machinery, checking that every node of a body has a kernel,
// routing the values bodies capture from enclosing graphs, and moving slices of tensors
// in and out of bodies.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../executable.hpp"
#include "../kernel.hpp"

namespace infer::cpu::kernels {

// What a body declares about one of its inputs or outputs (views die after create).
struct DeclaredValue {
  std::string name;
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;
  int64_t rank = -1;  // -1: unknown
  Dims dims;          // -1 for unknown dims
};

// The union of the values a node's bodies capture, in first-seen order: what the node's
// Kernel::captures() returns.
class CaptureList {
 public:
  size_t add(const infer_value_view* v);
  std::span<const infer_value_view* const> views() const { return views_; }

 private:
  std::vector<const infer_value_view*> views_;
};

// A body compiled once per node.
class CompiledBody {
 public:
  // Compiles the graph attribute `attr` of the node; its captures join `captures`.
  static Result<std::unique_ptr<CompiledBody>> compile(const KernelInit& init, const char* attr,
                                                       CaptureList& captures);

  // Runs the body with `inputs`, taking its captured values from the node's context.
  // Errors are prefixed with `where` (e.g. "body iteration 3: ").
  Status run(const KernelContext& ctx, std::span<const Tensor* const> inputs,
             std::vector<OwnedTensor>* outputs, const std::string& where) const;

  const std::string& attr() const { return attr_; }
  const std::vector<DeclaredValue>& inputs() const { return inputs_; }
  const std::vector<DeclaredValue>& outputs() const { return outputs_; }

 private:
  std::string attr_;
  std::unique_ptr<Executable> exe_;
  std::vector<size_t> capture_index_;  // position of each body capture in the node's list
  std::vector<std::string> capture_names_;
  std::vector<DeclaredValue> inputs_, outputs_;
};

// The graph attribute `attr`, or nullptr when the node has none (or it is not a graph).
const infer_graph_view* graph_attr(const infer_node_view& node, const char* attr);

// UNSUPPORTED unless every node of the graph attribute `attr` (and of the bodies nested
// in them) has a CPU kernel. A missing attribute passes: create reports it.
Status check_body_supported(const infer_node_view& node, const char* attr);

// The one element of a bool condition / int trip count tensor.
Result<bool> read_bool_scalar(const Tensor& t, const char* what);
Result<int64_t> read_int_scalar(const Tensor& t, const char* what);

// The slice `index` of `src` along `axis` (that axis removed), as a new tensor.
Result<OwnedTensor> take_slice(const sdk::Host& host, const Tensor& src, int64_t axis,
                               int64_t index);
// Writes `src` as slice `index` of `dst` along `axis` (src's dims are dst's without axis).
void put_slice(const Tensor& dst, int64_t axis, int64_t index, const Tensor& src);

// Allocates node output `i` like `src` and copies it (no-op for an omitted output).
Status copy_to_output(KernelContext& ctx, size_t i, const Tensor& src);

// The dims a declared value would have with `extra` inserted at `axis` (unknown dims
// become 0): the shape of a scan output when the body never ran.
Dims empty_stack_dims(const DeclaredValue& v, int64_t axis, int64_t extra_dim);

}  // namespace infer::cpu::kernels
