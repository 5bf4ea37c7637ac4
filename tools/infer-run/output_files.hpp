// File names for --output-dir: each output is written as <sanitized name>.npy, and
// outputs.json maps the output names (which may hold any character) to those files.
#pragma once

#include <string>
#include <vector>

namespace infer::cli {

// Replaces every character outside [A-Za-z0-9._-] with '_'. A name that would be empty
// or a path component of its own ("." or "..") gets a leading '_' as well, so the result
// is always a plain file name inside the output folder.
std::string sanitize_output_name(const std::string& name);

// One file name per output, in order: sanitized name + ".npy". Two outputs whose
// sanitized names collide ("a/b" and "a_b") get "_2", "_3"... suffixes so neither
// overwrites the other.
std::vector<std::string> output_file_names(const std::vector<std::string>& output_names);

}  // namespace infer::cli
