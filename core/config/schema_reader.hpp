// Typed, located reads from a yaml-cpp document. Private to infer_config: it is the one
// place that turns "this node is not what the schema wants" into a message naming the
// file, the line and the key path, so every rule in the schema reports errors alike.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "infer/status.hpp"

namespace infer::config::detail {

// A value in the document together with what an error message needs to point at it.
struct Field {
  YAML::Node node;
  std::string path;  // key path from the top: "optimization.level", "backends[1].name"; "" = the top
  int line = 0;      // 1-based; 0 when the position is unknown
};

// One key of a map and its value. The key's own line is kept because pins and errors
// about the key (unknown, repeated) point at the key, not at the value below it.
struct Entry {
  std::string key;
  int key_line = 0;
  Field value;
};

class SchemaReader {
 public:
  // `source` labels messages; `base_dir` is what relative paths are resolved against.
  SchemaReader(std::string source, std::filesystem::path base_dir);

  // The document's top-level node as a field.
  Field root(const YAML::Node& node) const;

  // InvalidArgument "<source>:<line>: <what>".
  Status error(int line, const std::string& what) const;
  // InvalidArgument "<source>:<line>: '<path>' must be <expected>, got <what it is>".
  Status expected(const Field& field, const std::string& expected) const;

  // The entries of a map with a fixed set of keys, in file order. A key outside `allowed`
  // is an error that lists them. A field given with no value reads as an empty map.
  Result<std::vector<Entry>> record(const Field& field, const std::vector<std::string_view>& allowed) const;
  // The entries of a map whose keys are the user's names (nodes, inputs, options).
  Result<std::vector<Entry>> map(const Field& field) const;
  // The items of a list. A field given with no value reads as an empty list.
  Result<std::vector<Field>> list(const Field& field) const;

  // A non-empty scalar, as written.
  Result<std::string> string(const Field& field) const;
  // A non-empty scalar naming a file or folder, resolved against the base folder.
  Result<std::string> path(const Field& field) const;
  // A plain (unquoted) decimal integer in [min, max].
  Result<int64_t> integer(const Field& field, int64_t min, int64_t max) const;
  // A plain (unquoted) true or false.
  Result<bool> boolean(const Field& field) const;
  // Any scalar, as written, possibly empty (plugin options are opaque strings here).
  Result<std::string> scalar(const Field& field) const;

 private:
  Result<std::vector<Entry>> entries(const Field& field, const std::vector<std::string_view>* allowed) const;

  std::string source_;
  std::filesystem::path base_dir_;
};

}  // namespace infer::config::detail
