// Tensors whose bytes live in a separate file (TensorProto.data_location = EXTERNAL).
//
// Security: a model is untrusted input, so a location may only name a file inside the
// model's folder. Absolute paths and paths that leave the folder after lexical
// normalisation ("../x.bin", "a/../../x.bin") are rejected naming the tensor. Symbolic
// links inside the folder are followed: model caches (e.g. Hugging Face's) link data
// files into blob stores, and whoever can create links in the folder already controls
// what the model reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "infer/status.hpp"
#include "ir/graph.hpp"

namespace infer::onnx_io {

// Checks an external-data location and returns it normalised (still relative).
Result<std::string> normalize_external_location(const std::string& location,
                                                const std::string& tensor_name);

// Resolves the external data of one model. Each file is memory-mapped once and shared by
// all the tensors that point into it; a tensor keeps its file mapped for as long as it
// lives (the TensorData holds the mapping), so weights are never copied, except for a
// tensor whose offset is not 16-byte aligned, which is copied so that typed access to
// its bytes stays aligned.
class ExternalData {
 public:
  // `base_dir`: the model's folder; empty when the model came from memory without one.
  explicit ExternalData(std::string base_dir);
  ~ExternalData();
  ExternalData(const ExternalData&) = delete;
  ExternalData& operator=(const ExternalData&) = delete;

  // The `expected_bytes` bytes of `tensor` (whose data_location is EXTERNAL), read per its
  // location/offset/length entries.
  Result<ir::TensorDataPtr> load(const onnx::TensorProto& tensor, const std::string& tensor_name,
                                 DataType dtype, std::vector<int64_t> dims, size_t expected_bytes);

 private:
  struct MappedFile;
  Result<std::shared_ptr<const MappedFile>> map_file(const std::string& relative,
                                                     const std::string& tensor_name);

  std::string base_dir_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;
};

}  // namespace infer::onnx_io
