// Error model of the core and of the public C++ API: every fallible call returns a
// Status or a Result<T>. Exceptions never escape a public function; messages carry
// their context ("node 'conv1' (Conv): input 1 has 3 dims, expected 4").
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "infer/printable.hpp"

namespace infer {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input from the user: model, file, flag, tensor
  kNotFound,         // a named thing does not exist (file, input, plugin)
  kUnsupported,      // never possible here (no backend implements an op, a dtype)
  kUnavailable,      // not possible now (no device, no driver, out of memory)
  kCancelled,
  kInternal,         // a bug in infer
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  // The message is kept printable (infer/printable.hpp): names and strings taken from a
  // file may hold any byte, and a message is printed as it is, so control bytes (but
  // newlines) and invalid UTF-8 become "\xNN" here, wherever the message was built.
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    if (!is_printable(message_, /*keep_newlines=*/true)) message_ = printable(message_, true);
  }

  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is prefixed with `context` ("loading 'm.onnx': ...").
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}     // NOLINT: implicit by design

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

inline const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kUnsupported: return "UNSUPPORTED";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

}  // namespace infer

// Propagate a failing Status (or Result's status) to the caller.
#define INFER_RETURN_IF_ERROR(expr)              \
  do {                                           \
    ::infer::Status infer_status__ = (expr);     \
    if (!infer_status__.is_ok()) return infer_status__; \
  } while (0)

#define INFER_CONCAT_INNER_(a, b) a##b
#define INFER_CONCAT_(a, b) INFER_CONCAT_INNER_(a, b)
// INFER_ASSIGN_OR_RETURN(auto x, make_x()); binds the value or returns the status.
#define INFER_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto INFER_CONCAT_(infer_result__, __LINE__) = (expr);                    \
  if (!INFER_CONCAT_(infer_result__, __LINE__).is_ok())                     \
    return INFER_CONCAT_(infer_result__, __LINE__).status();                \
  lhs = std::move(INFER_CONCAT_(infer_result__, __LINE__)).value()
