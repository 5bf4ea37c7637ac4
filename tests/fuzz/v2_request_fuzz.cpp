// Fuzz target: infer-serve's KServe v2 request parser (tools/infer-serve/v2_protocol).
// The first byte picks the framing: 'B' then a 2-byte little-endian length means a
// binary-extension request whose JSON header is that long (Inference-Header-Content-
// Length), anything else a plain JSON body. Whatever the bytes, the parser returns a
// request or a Status with a message; the tensors of a request it accepts have exactly
// their shape's bytes, and a response carrying them back is written with the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "v2_protocol.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "v2 request fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<size_t> header_length;
  if (size >= 3 && data[0] == 'B') {
    header_length = static_cast<size_t>(data[1]) | static_cast<size_t>(data[2]) << 8;
    data += 3;
    size -= 3;
  }
  auto body = std::make_shared<std::string>(reinterpret_cast<const char*>(data), size);
  auto request = infer::serve::parse_infer_request(*body, header_length, body);
  if (!request.is_ok()) {
    if (request.status().message().empty()) fail("empty error message");
    return 0;
  }
  std::vector<infer::serve::ResponseOutput> outputs;
  size_t total = 0;
  for (const infer::NamedTensor& input : request->inputs) {
    const infer::Tensor& t = input.tensor;
    if (t.size_bytes() != infer::storage_bytes(t.dtype(), t.element_count()))
      fail("tensor bytes differ from shape");
    total += t.size_bytes();
    outputs.push_back({input.name, t, true});
  }
  auto response = infer::serve::encode_infer_response("m", "1", request->id, outputs);
  if (!response.is_ok()) fail("an accepted request's tensors cannot be written back");
  if (!outputs.empty()) {
    if (!response->header_length || response->body.size() != *response->header_length + total)
      fail("binary response length differs from its tensors");
    size_t at = *response->header_length;
    for (const auto& o : outputs) {
      if (o.tensor.size_bytes() > 0 &&
          std::memcmp(response->body.data() + at, o.tensor.data(), o.tensor.size_bytes()) != 0)
        fail("binary response bytes differ from the request's");
      at += o.tensor.size_bytes();
    }
  }
  return 0;
}
