#include "config/schema_reader.hpp"

#include <charconv>
#include <limits>
#include <map>
#include <system_error>
#include <utility>

namespace infer::config::detail {
namespace {

// yaml-cpp gives a value written as nothing ("threads:") the position of the *next*
// token, often on the following line, so such a value is located at its key instead.
int line_of(const YAML::Node& node, int fallback) {
  if (node.IsNull() && fallback > 0) return fallback;
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? fallback : mark.line + 1;
}

// yaml-cpp tags a quoted scalar "!" and a plain one "?". The schema reads numbers and
// booleans only from plain scalars, as YAML itself does: "2" in quotes is a string.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!"; }

// How a node looks to the user, for the "got ..." half of a message. Quoted scalars keep
// double quotes so `threads: "2"` reads as a string rather than a puzzling "got '2'".
std::string describe(const YAML::Node& node) {
  if (node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (is_quoted(node)) return "\"" + node.Scalar() + "\"";
  return "'" + node.Scalar() + "'";
}

// The top level has no key path, so messages name it in words.
std::string name_of(const Field& field) {
  return field.path.empty() ? std::string("the top level") : "'" + field.path + "'";
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

bool contains(const std::vector<std::string_view>& names, const std::string& key) {
  for (std::string_view name : names) {
    if (name == key) return true;
  }
  return false;
}

// Ranges open at the top are worded as the schema documents them ("an integer >= 1")
// rather than with a meaningless upper bound such as 2147483647.
bool open_above(int64_t max) { return max >= std::numeric_limits<int32_t>::max(); }

std::string describe_range(int64_t min, int64_t max) {
  if (open_above(max)) return "an integer >= " + std::to_string(min);
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

// YAML 1.2 core-schema decimal integers: an optional sign, then digits. Hex, octal and
// digit separators are left out on purpose; no key in the schema needs them.
std::from_chars_result parse_decimal(std::string_view text, int64_t& out) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
  return std::from_chars(text.data(), text.data() + text.size(), out);
}

}  // namespace

SchemaReader::SchemaReader(std::string source, std::filesystem::path base_dir)
    : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

Field SchemaReader::root(const YAML::Node& node) const { return Field{node, "", line_of(node, 1)}; }

Status SchemaReader::error(int line, const std::string& what) const {
  if (line <= 0) return invalid_argument(source_ + ": " + what);
  return invalid_argument(source_ + ":" + std::to_string(line) + ": " + what);
}

Status SchemaReader::expected(const Field& field, const std::string& expected) const {
  return error(field.line, name_of(field) + " must be " + expected + ", got " + describe(field.node));
}

Result<std::vector<Entry>> SchemaReader::record(const Field& field,
                                                const std::vector<std::string_view>& allowed) const {
  return entries(field, &allowed);
}

Result<std::vector<Entry>> SchemaReader::map(const Field& field) const { return entries(field, nullptr); }

Result<std::vector<Entry>> SchemaReader::entries(const Field& field,
                                                 const std::vector<std::string_view>* allowed) const {
  std::vector<Entry> out;
  if (field.node.IsNull()) return out;
  if (!field.node.IsMap()) return expected(field, "a map");

  // yaml-cpp keeps both copies of a repeated key and lookups see only the first, so a
  // second `threads:` would be silently ignored; it is reported instead.
  std::map<std::string, int> first_line;
  for (const auto& kv : field.node) {
    const int key_line = line_of(kv.first, field.line);
    if (!kv.first.IsScalar() || kv.first.Scalar().empty()) {
      return error(key_line, "keys of " + name_of(field) + " must be non-empty names, got " + describe(kv.first));
    }
    const std::string key = kv.first.Scalar();
    const std::string path = child_path(field.path, key);
    if (allowed != nullptr && !contains(*allowed, key)) {
      return error(key_line, "unknown key '" + path + "' (expected one of: " + join(*allowed) + ")");
    }
    const auto [seen, inserted] = first_line.emplace(key, key_line);
    if (!inserted) {
      return error(key_line, "duplicate key '" + path + "' (first given on line " + std::to_string(seen->second) + ")");
    }
    out.push_back(Entry{key, key_line, Field{kv.second, path, line_of(kv.second, key_line)}});
  }
  return out;
}

Result<std::vector<Field>> SchemaReader::list(const Field& field) const {
  std::vector<Field> out;
  if (field.node.IsNull()) return out;
  if (!field.node.IsSequence()) return expected(field, "a list");
  for (const auto& item : field.node) {
    // An empty item ("-" alone) has only the next token's position; it is the best known.
    const std::string path = field.path + "[" + std::to_string(out.size()) + "]";
    out.push_back(Field{item, path, line_of(item, 0)});
  }
  return out;
}

Result<std::string> SchemaReader::string(const Field& field) const {
  if (!field.node.IsScalar() || field.node.Scalar().empty()) return expected(field, "a non-empty string");
  return field.node.Scalar();
}

Result<std::string> SchemaReader::path(const Field& field) const {
  INFER_ASSIGN_OR_RETURN(std::string text, string(field));
  const std::filesystem::path written(text);
  // Normalizing lexically turns "configs/../models/m.onnx" into "models/m.onnx", which is
  // what a user expects to see in logs; it does not touch the file system.
  if (written.is_absolute() || base_dir_.empty()) return written.lexically_normal().string();
  return (base_dir_ / written).lexically_normal().string();
}

Result<int64_t> SchemaReader::integer(const Field& field, int64_t min, int64_t max) const {
  const std::string what = describe_range(min, max);
  if (!field.node.IsScalar() || is_quoted(field.node)) return expected(field, what);

  const std::string& text = field.node.Scalar();
  int64_t value = 0;
  const auto [end, ec] = parse_decimal(text, value);
  const bool whole = end == text.data() + text.size();
  if (ec == std::errc() && whole && value >= min && value <= max) return value;

  const bool too_large =
      whole && open_above(max) && (ec == std::errc::result_out_of_range ? text.front() != '-' : value > max);
  if (!too_large) return expected(field, what);
  return error(field.line, name_of(field) + " must be " + what + ", got " + describe(field.node) + " (too large)");
}

Result<bool> SchemaReader::boolean(const Field& field) const {
  // The YAML 1.2 core spellings only; yaml-cpp would also take yes/no/on/off, which
  // YAML 1.2 reads as strings and which invite typos to pass as booleans.
  if (field.node.IsScalar() && !is_quoted(field.node)) {
    const std::string& text = field.node.Scalar();
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
  }
  return expected(field, "true or false");
}

Result<std::string> SchemaReader::scalar(const Field& field) const {
  if (!field.node.IsScalar()) return expected(field, "a single value (number, string or boolean)");
  return field.node.Scalar();
}

}  // namespace infer::config::detail
