#include "output_files.hpp"

#include <set>

namespace infer::cli {

std::string sanitize_output_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
    if (!keep) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out;
}

std::vector<std::string> output_file_names(const std::vector<std::string>& output_names) {
  std::vector<std::string> files;
  std::set<std::string> taken;
  for (const std::string& name : output_names) {
    const std::string base = sanitize_output_name(name);
    std::string file = base + ".npy";
    for (int n = 2; taken.count(file) != 0; ++n) file = base + "_" + std::to_string(n) + ".npy";
    taken.insert(file);
    files.push_back(file);
  }
  return files;
}

}  // namespace infer::cli
