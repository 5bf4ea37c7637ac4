#include "options.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

namespace infer::vk {
namespace {

Failure bad_option(const char* key, const char* expected, const std::string& value) {
  return failure(INFER_STATUS_INVALID_ARGUMENT,
                 std::string("vulkan: option ") + key + " must be " + expected + ", got '" +
                     value + "'");
}

// YAML spells booleans many ways; accept the usual ones.
bool parse_bool(const std::string& v, bool* out) {
  if (v == "true" || v == "1" || v == "yes" || v == "on" || v == "True" || v == "TRUE") {
    *out = true;
    return true;
  }
  if (v == "false" || v == "0" || v == "no" || v == "off" || v == "False" || v == "FALSE") {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace

MaybeFailure read_options(const sdk::Host& host, Options* out) {
  *out = Options{};
  if (std::string v = host.option("device"); !v.empty()) {
    int64_t index = -1;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), index);
    if (ec != std::errc() || ptr != v.data() + v.size() || index < 0)
      return bad_option("device", "a device index (0, 1, ...)", v);
    out->device_index = index;
  }
  if (std::string v = host.option("validation"); !v.empty()) {
    if (!parse_bool(v, &out->validation)) return bad_option("validation", "true or false", v);
  }
  // The environment switch lets a test or a user debugging a model turn validation on
  // without a config file; it can only add validation, never remove it.
  if (const char* env = std::getenv("INFER_VULKAN_VALIDATION"); env != nullptr && *env) {
    bool on = false;
    if (parse_bool(env, &on) && on) out->validation = true;
  }
  if (std::string v = host.option("unified_memory"); !v.empty()) {
    if (!parse_bool(v, &out->unified_memory))
      return bad_option("unified_memory", "true or false", v);
  }
  return std::nullopt;
}

}  // namespace infer::vk
