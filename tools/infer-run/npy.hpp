// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Supported: every numeric dtype numpy and infer share (float16/32/64, int8..int64,
// uint8..uint64, complex64/128) and bool, little-endian, C order, any rank including
// scalars and zero-size arrays. Everything else (Fortran order, big-endian, structured,
// string or object arrays, corrupt or truncated files) is refused with a message that
// names the file: "cannot read 'x.npy': <why>".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "host_array.hpp"
#include "infer/status.hpp"

namespace infer::cli {

// The .npy descriptor numpy writes for `dtype` ("<f4", "|b1"...), or nullopt when numpy
// has no such dtype (bfloat16, float8, int4, string).
std::optional<std::string> npy_descr(DataType dtype);

// Parses a whole .npy file held in memory. `label` names the file in messages.
Result<HostArray> parse_npy(std::string_view file_bytes, const std::string& label);

// Reads and parses the .npy file at `path`.
Result<HostArray> read_npy(const std::string& path);

// The .npy file numpy itself would write for `array` with np.save (version 1.0, header
// padded to 64 bytes with numpy's growth room), so files compare equal byte for byte.
// Fails for dtypes numpy lacks; convert those first (tensor_convert.hpp).
Result<std::string> encode_npy(const HostArray& array);

// Encodes `array` and writes it to `path`, replacing any file there.
Status write_npy(const std::string& path, const HostArray& array);

}  // namespace infer::cli
