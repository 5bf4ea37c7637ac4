// Loading ONNX models into the IR. This is the only place in infer that knows the ONNX
// file format; nothing of onnx or protobuf appears in this header, so users of the
// loader neither include nor link them.
//
// What load_model() does, in order:
//   1. reads and parses the file (protobuf),
//   2. checks the model level: a graph, an ir_version, the opset imports (the default
//      domain's opset must be 7 or newer),
//   3. runs ONNX's checker (LoadOptions::run_checker) with infer's policy on top (see
//      model_check.hpp: custom domains are legitimate, opsets newer than the bundled
//      ONNX release are checked only for well-formedness),
//   4. runs ONNX's shape inference with data propagation (LoadOptions::run_shape_inference),
//   5. converts the graph and its If/Loop/Scan bodies into ir::Graph: constants (also
//      external data, resolved inside the model's folder), value types and shapes,
//      attributes, generated names for unnamed nodes ("Conv_3"), quantization
//      descriptors on the inputs of DequantizeLinear. Constant nodes stay nodes, in one
//      normal form: a single attribute `value` (kTensor), whatever the file used
//      (value_float, value_ints...). Graph inputs that are also initializers are
//      constants, not inputs. String tensors, sequences, maps, optionals and sparse
//      tensors are Unsupported,
//   6. sorts the nodes topologically (the file is not trusted to be sorted).
// Every failure is a Status whose one-line message names the file and the node, tensor
// or field at fault; no exception escapes.
#pragma once

#include <cstddef>
#include <string>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::onnx_io {

struct LoadOptions {
  // ONNX's structural and schema checks. Turning them off only makes sense for models
  // known to be valid (it saves time on very large graphs).
  bool run_checker = true;
  // ONNX's type and shape inference, which fills in the types and shapes of
  // intermediate values; without it they come only from the file's value_info.
  bool run_shape_inference = true;
};

// Loads the model at `path`. External data files are looked up relative to the folder
// that contains `path`.
Result<ir::Model> load_model(const std::string& path, const LoadOptions& options = {});

// Loads a model from `size` bytes at `data` (not kept after the call). Messages name it
// `name_for_messages`; external data files are looked up relative to `base_dir` (an empty
// base_dir makes any external data an error).
Result<ir::Model> load_model_from_memory(const void* data, size_t size,
                                         const std::string& name_for_messages,
                                         const std::string& base_dir,
                                         const LoadOptions& options = {});

}  // namespace infer::onnx_io
