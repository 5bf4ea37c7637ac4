// See external_data.hpp.
#include "onnx/external_data.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

namespace infer::onnx_io {
namespace {

// Parses the decimal value of an "offset" or "length" entry.
Result<uint64_t> parse_size(const std::string& key, const std::string& text,
                            const std::string& tensor_name) {
  auto bad = [&] {
    return invalid_argument("tensor '" + tensor_name + "': external data '" + key + "' is '" +
                            text + "', expected a non-negative integer");
  };
  if (text.empty() || text.size() > 19) return bad();
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return bad();
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

Result<std::string> normalize_external_location(const std::string& location,
                                                const std::string& tensor_name) {
  const std::string prefix = "tensor '" + tensor_name + "': external data location '";
  if (location.empty())
    return invalid_argument("tensor '" + tensor_name + "': external data location is empty");
  if (location.find('\0') != std::string::npos)
    return invalid_argument(prefix + "' contains a NUL character");
  const std::filesystem::path path(location);
  if (path.is_absolute() || path.has_root_name() || path.has_root_directory())
    return invalid_argument(prefix + location +
                            "' is an absolute path; it must be relative to the model's folder");
  const std::filesystem::path normal = path.lexically_normal();
  if (normal.empty() || normal == "." || !normal.has_filename())
    return invalid_argument(prefix + location + "' names no file");
  if (*normal.begin() == "..")
    return invalid_argument(prefix + location +
                            "' leads outside the model's folder, which is not allowed");
  return normal.string();
}

struct ExternalData::MappedFile {
  const uint8_t* data = nullptr;
  size_t size = 0;
  ~MappedFile() {
    if (data) munmap(const_cast<uint8_t*>(data), size);
  }
};

ExternalData::ExternalData(std::string base_dir) : base_dir_(std::move(base_dir)) {}
ExternalData::~ExternalData() = default;

Result<std::shared_ptr<const ExternalData::MappedFile>> ExternalData::map_file(
    const std::string& relative, const std::string& tensor_name) {
  auto cached = files_.find(relative);
  if (cached != files_.end()) return cached->second;

  const std::string full = (std::filesystem::path(base_dir_) / relative).string();
  const std::string what = "tensor '" + tensor_name + "': external data file '" + full + "'";
  int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    Status s(err == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
             "tensor '" + tensor_name + "': cannot open external data file '" + full +
                 "': " + std::strerror(err));
    return s;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalid_argument(what + " is not a regular file");
  }
  auto file = std::make_shared<MappedFile>();
  file->size = static_cast<size_t>(st.st_size);
  if (file->size > 0) {
    void* p = ::mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return unavailable(what + " cannot be mapped: " + std::strerror(err));
    }
    file->data = static_cast<const uint8_t*>(p);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  std::shared_ptr<const MappedFile> shared = file;
  files_.emplace(relative, shared);
  return shared;
}

Result<ir::TensorDataPtr> ExternalData::load(const onnx::TensorProto& tensor,
                                             const std::string& tensor_name, DataType dtype,
                                             std::vector<int64_t> dims, size_t expected_bytes) {
  std::string location;
  bool has_location = false;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      has_location = true;
    } else if (entry.key() == "offset") {
      INFER_ASSIGN_OR_RETURN(offset, parse_size("offset", entry.value(), tensor_name));
    } else if (entry.key() == "length") {
      INFER_ASSIGN_OR_RETURN(length, parse_size("length", entry.value(), tensor_name));
    }
    // Other keys ("checksum", ...) are informative; ONNX does not require readers to
    // verify them.
  }
  if (!has_location)
    return invalid_argument("tensor '" + tensor_name +
                            "' is stored externally but has no 'location' entry");
  INFER_ASSIGN_OR_RETURN(std::string relative, normalize_external_location(location, tensor_name));
  if (base_dir_.empty())
    return invalid_argument("tensor '" + tensor_name + "' keeps its data in external file '" +
                            location +
                            "', but the model was loaded from memory without a base folder");
  if (length && *length != expected_bytes)
    return invalid_argument("tensor '" + tensor_name + "': external data length is " +
                            std::to_string(*length) + " bytes, but its " +
                            std::string(dtype_name(dtype)) + " shape needs " +
                            std::to_string(expected_bytes));
  INFER_ASSIGN_OR_RETURN(auto file, map_file(relative, tensor_name));
  if (offset > file->size || file->size - offset < expected_bytes)
    return invalid_argument("tensor '" + tensor_name + "': external data file '" + location +
                            "' has " + std::to_string(file->size) + " bytes, too short for " +
                            std::to_string(expected_bytes) + " bytes at offset " +
                            std::to_string(offset));
  if (expected_bytes == 0)
    return std::make_shared<const ir::TensorData>(dtype, std::move(dims), std::vector<uint8_t>{});
  const uint8_t* bytes = file->data + offset;
  if (reinterpret_cast<uintptr_t>(bytes) % 16 != 0) {
    std::vector<uint8_t> copy(bytes, bytes + expected_bytes);
    return std::make_shared<const ir::TensorData>(dtype, std::move(dims), std::move(copy));
  }
  return std::make_shared<const ir::TensorData>(dtype, std::move(dims), bytes, expected_bytes,
                                                std::shared_ptr<const void>(file));
}

}  // namespace infer::onnx_io
