#include "named_arg.hpp"

#include <algorithm>
#include <charconv>

namespace infer::cli {

Result<NamedValue> parse_named_value(std::string_view text, std::string_view flag) {
  const size_t eq = text.find('=');
  const std::string quoted = std::string(flag) + " '" + std::string(text) + "'";
  if (eq == std::string_view::npos) return invalid_argument(quoted + ": expected NAME=VALUE");
  if (eq == 0) return invalid_argument(quoted + ": the name before '=' is empty");
  if (eq + 1 == text.size()) return invalid_argument(quoted + ": the value after '=' is empty");
  return NamedValue{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

Result<std::vector<int64_t>> parse_dims(std::string_view text) {
  std::vector<int64_t> dims;
  if (text.empty() || text == "scalar") return dims;
  const char separator = text.find(',') != std::string_view::npos ? ',' : 'x';
  size_t start = 0;
  while (true) {
    const size_t end = std::min(text.find(separator, start), text.size());
    const std::string_view part = text.substr(start, end - start);
    int64_t dim = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), dim);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size() || dim < 0) {
      return invalid_argument("dim " + std::to_string(dims.size()) + " '" + std::string(part) +
                              "' is not a non-negative integer (write dims like 1x3x224x224)");
    }
    dims.push_back(dim);
    if (end == text.size()) break;
    start = end + 1;
  }
  return dims;
}

Result<NamedShape> parse_shape_arg(std::string_view text) {
  // "image=" is a legitimate scalar shape here, so the empty-value check of
  // parse_named_value does not apply.
  const size_t eq = text.find('=');
  const std::string quoted = "--shape '" + std::string(text) + "'";
  if (eq == std::string_view::npos) return invalid_argument(quoted + ": expected NAME=DIMS, e.g. image=1x1x8x8");
  if (eq == 0) return invalid_argument(quoted + ": the name before '=' is empty");
  Result<std::vector<int64_t>> dims = parse_dims(text.substr(eq + 1));
  if (!dims.is_ok()) return dims.status().with_context(quoted);
  return NamedShape{std::string(text.substr(0, eq)), std::move(dims).value()};
}

std::string dims_to_arg(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += "x";
    text += std::to_string(dims[i]);
  }
  return text;
}

}  // namespace infer::cli
