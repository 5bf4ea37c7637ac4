// Fuzz target: bytes in memory through the whole ONNX loader (protobuf parsing, the model
// checks, ONNX's checker with infer's policy, shape inference with data propagation,
// conversion to the IR and the topological sort). Whatever the bytes, the loader must
// return a model or a Status, never crash, hang or leak, and a failure's message must be
// printable (no raw bytes from the file reach it).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "infer/printable.hpp"
#include "onnx/model_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = infer::onnx_io::load_model_from_memory(data, size, "fuzz.onnx", /*base_dir=*/"");
  if (!model.is_ok()) {
    const std::string& message = model.status().message();
    if (message.empty() || !infer::is_printable(message, /*keep_newlines=*/true)) {
      std::fprintf(stderr, "loader failure with an empty or unprintable message: '%s'\n",
                   message.c_str());
      std::abort();
    }
  }
  return 0;
}
