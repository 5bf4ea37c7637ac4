#include "options.hpp"

#include <charconv>
#include <string>

namespace infer::example {
namespace {

// Parses the whole of `text` as a number of type T; false on junk or trailing characters.
template <typename T>
bool parse_number(const std::string& text, T* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end && !text.empty();
}

Failure bad_option(const char* key, const char* expected, const std::string& value) {
  return failure(
      INFER_STATUS_INVALID_ARGUMENT,
      std::string("example: option ") + key + " must be " + expected + ", got '" + value + "'");
}

}  // namespace

MaybeFailure read_options(const sdk::Host& host, Options* out) {
  *out = Options{};

  // An unset option (empty string from Host::option) keeps its default.
  if (std::string v = host.option("memory_mb"); !v.empty()) {
    uint64_t mb = 0;
    // The upper bound keeps memory_mb << 20 from overflowing 64 bits.
    if (!parse_number(v, &mb) || mb == 0 || mb > (uint64_t{1} << 40))
      return bad_option("memory_mb", "a positive integer (MiB)", v);
    out->memory_bytes = mb << 20;
  }
  if (std::string v = host.option("copy_latency_us"); !v.empty()) {
    double us = 0;
    if (!parse_number(v, &us) || !(us >= 0.0) || us > 1e7)
      return bad_option("copy_latency_us", "a number of microseconds in [0, 1e7]", v);
    out->copy_latency_us = us;
  }
  if (std::string v = host.option("copy_bandwidth_gbps"); !v.empty()) {
    double gbps = 0;
    if (!parse_number(v, &gbps) || !(gbps > 0.0))
      return bad_option("copy_bandwidth_gbps", "a positive number (GB/s)", v);
    out->copy_bandwidth_gbps = gbps;
  }
  return std::nullopt;
}

}  // namespace infer::example
