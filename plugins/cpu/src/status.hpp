// The plugin's internal error model: a Status (code + message) and Result<T>. It mirrors
// the core's infer::Status but lives here because plugins depend on sdk/ only. A Status
// becomes an ABI infer_status* only at the boundary (to_abi).
#pragma once

#include <sstream>
#include <string>
#include <utility>
#include <variant>

#include "infer/plugin.hpp"

namespace infer::cpu {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(infer_status_code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == INFER_STATUS_OK; }
  infer_status_code code() const { return code_; }
  const std::string& message() const { return message_; }
  // A copy whose message starts with `prefix` ("node 'a' (Add): " + message).
  Status with_prefix(const std::string& prefix) const {
    return is_ok() ? *this : Status(code_, prefix + message_);
  }

 private:
  infer_status_code code_ = INFER_STATUS_OK;
  std::string message_;
};

// Concatenates anything streamable: cat("axis ", 3, " out of range").
template <typename... Args>
std::string cat(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}

template <typename... Args>
Status invalid(const Args&... args) {
  return Status(INFER_STATUS_INVALID_ARGUMENT, cat(args...));
}
template <typename... Args>
Status unsupported(const Args&... args) {
  return Status(INFER_STATUS_UNSUPPORTED, cat(args...));
}
template <typename... Args>
Status internal(const Args&... args) {
  return Status(INFER_STATUS_INTERNAL, cat(args...));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design
  bool is_ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return is_ok() ? Status() : std::get<Status>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

// Hands a Status over the ABI: NULL for OK, else a host-created status object.
inline infer_status* to_abi(const sdk::Host& host, const Status& s) {
  return s.is_ok() ? nullptr : host.status(s.code(), s.message());
}

// Takes over a status returned by a host service (e.g. alloc_output) and frees it.
inline Status from_abi(const sdk::Host& host, infer_status* s) {
  if (s == nullptr) return Status();
  const infer_host_services* h = host.raw();
  Status out(h->status_code(s), h->status_message(s));
  h->status_free(s);
  return out;
}

}  // namespace infer::cpu

#define CPU_RETURN_IF_ERROR(expr)                   \
  do {                                              \
    ::infer::cpu::Status cpu_status__ = (expr);     \
    if (!cpu_status__.is_ok()) return cpu_status__; \
  } while (0)

#define CPU_CONCAT_INNER_(a, b) a##b
#define CPU_CONCAT_(a, b) CPU_CONCAT_INNER_(a, b)
#define CPU_ASSIGN_OR_RETURN(lhs, expr)                  \
  auto CPU_CONCAT_(cpu_result__, __LINE__) = (expr);     \
  if (!CPU_CONCAT_(cpu_result__, __LINE__).is_ok())      \
    return CPU_CONCAT_(cpu_result__, __LINE__).status(); \
  lhs = std::move(CPU_CONCAT_(cpu_result__, __LINE__)).value()
