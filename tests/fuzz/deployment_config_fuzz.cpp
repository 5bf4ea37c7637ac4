// Fuzz target: the deployment-file parser (core/config, yaml-cpp underneath). Whatever
// the text, parse_config returns a validated DeploymentConfig or a Status with a
// printable message naming the source; it never throws, crashes, hangs or leaks.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "config/deployment_config.hpp"
#include "infer/printable.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = infer::config::parse_config(text, "fuzz.yaml", /*base_dir=*/"");
  if (!config.is_ok()) {
    const std::string& message = config.status().message();
    if (message.find("fuzz.yaml") == std::string::npos || !infer::is_printable(message, true)) {
      std::fprintf(stderr, "config failure whose message does not name the file or is unprintable: '%s'\n",
                   message.c_str());
      std::abort();
    }
  }
  return 0;
}
