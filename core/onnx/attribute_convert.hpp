// AttributeProto -> ir::Attribute, and the normal form of Constant nodes.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"
#include "ir/graph.hpp"
#include "onnx/external_data.hpp"

namespace infer::onnx_io {

// Converts a body (GRAPH/GRAPHS attribute) into an ir::Graph; supplied by the graph
// converter, which knows the enclosing scope.
using BodyConverter = std::function<Result<std::shared_ptr<ir::Graph>>(
    onnx::GraphProto& body, const std::string& body_label)>;

// Converts every attribute type infer represents (the ONNX AttrType numbering is kept).
// Tensors are named `tensor_name` in messages when it is not empty, else by their own
// name, else by the attribute's. Sparse tensors and type-proto attributes are Unsupported;
// an attribute without a type (IR version 1) gets the type of the field that is set.
// Messages start with "attribute '<name>'".
Result<ir::Attribute> convert_attribute(onnx::AttributeProto& attr, ExternalData& external,
                                        const std::string& tensor_name,
                                        const BodyConverter& convert_body);

// Rewrites a converted Constant node (default domain) into infer's normal form: a single
// attribute `value` of type kTensor, whatever the file used (value, value_float(s),
// value_int(s)), so that backends and the optimizer read one form. String constants
// (value_string(s)) are Unsupported naming `output_name`; a node with none or several of
// the value attributes is InvalidArgument.
Status normalize_constant(ir::Node& node, const std::string& output_name);

}  // namespace infer::onnx_io
