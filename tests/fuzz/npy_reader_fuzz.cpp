// Fuzz target: the .npy reader of infer-run (tools/infer-run/npy.hpp). Whatever the
// bytes, parse_npy returns an array or a Status with a printable message; an array it
// accepts is written back by encode_npy and read again to the same dtype, shape and data.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "infer/printable.hpp"
#include "npy.hpp"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "npy fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto array = infer::cli::parse_npy(bytes, "fuzz.npy");
  if (!array.is_ok()) {
    const std::string& message = array.status().message();
    if (message.empty() || !infer::is_printable(message, true)) fail("empty or unprintable message");
    return 0;
  }
  auto encoded = infer::cli::encode_npy(*array);
  if (!encoded.is_ok()) fail("an array parse_npy accepted cannot be encoded");
  auto again = infer::cli::parse_npy(*encoded, "fuzz.npy");
  if (!again.is_ok()) fail("encode_npy wrote a file parse_npy rejects");
  if (again->dtype != array->dtype || again->shape != array->shape || again->bytes != array->bytes)
    fail("round trip changed the array");
  return 0;
}
