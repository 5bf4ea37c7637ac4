// Paths of the committed fixtures (tests/tools/data/, made by gen_npy_fixtures.py and
// gen_model_fixtures.py) and of the source tree.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "infer_test_paths.hpp"

namespace infer::cli::testing {

inline std::string source_path(const std::string& relative) { return std::string(INFER_SOURCE_DIR) + "/" + relative; }

inline std::string data_path(const std::string& name) { return source_path("tests/tools/data/" + name); }

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace infer::cli::testing
