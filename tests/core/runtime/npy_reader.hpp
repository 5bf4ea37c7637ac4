// A minimal reader for the .npy files the tests compare against (NumPy's format: magic,
// version, a Python-dict header with descr/fortran_order/shape, then raw little-endian
// data). Only what the shipped files use: C order, '<f4' and '<i8'.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "infer/status.hpp"

namespace infer::testing {

struct NpyArray {
  std::string descr;  // "<f4", "<i8"
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data.data());
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

inline Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    return invalid_argument(path + ": not a .npy file");
  const int major = bytes[6];
  size_t header_len = 0;
  size_t pos = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    pos = 10;
  } else {
    if (bytes.size() < 12) return invalid_argument(path + ": truncated header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t{bytes[11]} << 24);
    pos = 12;
  }
  if (pos + header_len > bytes.size()) return invalid_argument(path + ": truncated header");
  const std::string header(bytes.begin() + static_cast<long>(pos),
                           bytes.begin() + static_cast<long>(pos + header_len));
  NpyArray a;
  auto quoted_after = [&](const std::string& key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t q1 = header.find('\'', header.find(':', k) + 1);
    size_t q2 = header.find('\'', q1 + 1);
    return header.substr(q1 + 1, q2 - q1 - 1);
  };
  a.descr = quoted_after("descr");
  if (header.find("'fortran_order': False") == std::string::npos)
    return invalid_argument(path + ": only C-order arrays are supported");
  size_t open = header.find('(', header.find("'shape'"));
  size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  size_t start = 0;
  while (start < dims.size()) {
    size_t comma = dims.find(',', start);
    std::string item =
        dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.find_first_not_of(' ') != std::string::npos) a.shape.push_back(std::stoll(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  size_t elem = a.descr == "<f4" ? 4 : a.descr == "<i8" ? 8 : 0;
  if (elem == 0) return invalid_argument(path + ": unsupported dtype " + a.descr);
  const size_t need = static_cast<size_t>(a.count()) * elem;
  if (bytes.size() - pos - header_len != need)
    return invalid_argument(path + ": data size does not match the shape");
  a.data.assign(bytes.begin() + static_cast<long>(pos + header_len), bytes.end());
  return a;
}

}  // namespace infer::testing
