// See model_writer.hpp: serializing the converted model and writing the file.
#include "onnx/model_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include <onnx/onnx_pb.h>

#include "onnx/graph_export.hpp"

namespace infer::onnx_io {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Writes all of `bytes` to `tmp` and renames it over `path`, so that a failure (a full
// disk, a killed process) never leaves a truncated model where a reader expects one.
// The temporary file sits beside `path`, since rename() cannot cross file systems.
Status write_atomically(const std::string& path, const std::string& bytes) {
  const std::string where = "cannot write model '" + path + "'";
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    // The temporary name would only confuse: the user asked for `path`, and whatever
    // stops the temporary file (a missing or read-only folder) stops `path` too.
    return Status(err == ENOENT || err == ENOTDIR ? StatusCode::kNotFound
                                                  : StatusCode::kInvalidArgument,
                  where + ": " + errno_text(err));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return unavailable(where + ": " + errno_text(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return unavailable(where + ": " + errno_text(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return invalid_argument(where + ": " + errno_text(err));
  }
  return Status::ok();
}

}  // namespace

Status save_model(const ir::Model& model, const std::string& path) {
  const std::string where = "cannot write model '" + path + "'";
  try {
    if (path.empty()) return invalid_argument("cannot write model: the file name is empty");
    auto proto = to_model_proto(model);
    if (!proto.is_ok()) return proto.status().with_context(where);
    std::string bytes;
    if (proto->ByteSizeLong() > static_cast<size_t>(INT_MAX) || !proto->SerializeToString(&bytes))
      return unsupported(where + ": protobuf could not serialize it (over its 2 GiB limit?)");
    return write_atomically(path, bytes);
  } catch (const std::bad_alloc&) {
    return unavailable(where + ": out of memory");
  } catch (const std::exception& e) {
    return internal_error(where + ": unexpected error: " + e.what());
  }
}

}  // namespace infer::onnx_io
