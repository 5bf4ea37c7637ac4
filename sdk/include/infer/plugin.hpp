// Header-only C++ helpers for plugin authors. Nothing here is part of the ABI: a plugin
// may use none of it. It depends only on plugin_api.h and the C++ standard library, so
// an out-of-tree plugin needs nothing but the sdk/ folder.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "infer/plugin_api.h"

namespace infer::sdk {

// Bytes per element of a dtype; 0 for types without a fixed byte size (string, and the
// 4-bit types, whose size depends on the element count: see tensor_bytes).
inline size_t dtype_size(infer_dtype t) {
  switch (t) {
    case INFER_DTYPE_BOOL:
    case INFER_DTYPE_UINT8:
    case INFER_DTYPE_INT8:
    case INFER_DTYPE_FLOAT8E4M3FN:
    case INFER_DTYPE_FLOAT8E4M3FNUZ:
    case INFER_DTYPE_FLOAT8E5M2:
    case INFER_DTYPE_FLOAT8E5M2FNUZ: return 1;
    case INFER_DTYPE_UINT16:
    case INFER_DTYPE_INT16:
    case INFER_DTYPE_FLOAT16:
    case INFER_DTYPE_BFLOAT16: return 2;
    case INFER_DTYPE_FLOAT32:
    case INFER_DTYPE_INT32:
    case INFER_DTYPE_UINT32: return 4;
    case INFER_DTYPE_FLOAT64:
    case INFER_DTYPE_INT64:
    case INFER_DTYPE_UINT64:
    case INFER_DTYPE_COMPLEX64: return 8;
    case INFER_DTYPE_COMPLEX128: return 16;
    default: return 0;
  }
}

inline int64_t element_count(const int64_t* dims, size_t rank) {
  int64_t n = 1;
  for (size_t i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

// Storage bytes for `count` elements (4-bit types pack two per byte).
inline size_t tensor_bytes(infer_dtype t, int64_t count) {
  if (t == INFER_DTYPE_INT4 || t == INFER_DTYPE_UINT4) return static_cast<size_t>((count + 1) / 2);
  return static_cast<size_t>(count) * dtype_size(t);
}

// Wraps the host services table for convenient status creation and logging.
class Host {
 public:
  Host() = default;
  explicit Host(const infer_host_services* h) : h_(h) {}
  const infer_host_services* raw() const { return h_; }

  infer_status* status(infer_status_code code, const std::string& message) const {
    return h_->status_create(h_->host_ctx, code, message.c_str());
  }
  // printf-style status creation: error(INFER_STATUS_UNSUPPORTED, "op %s", op).
  infer_status* error(infer_status_code code, const char* fmt, ...) const
      __attribute__((format(printf, 3, 4))) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return h_->status_create(h_->host_ctx, code, buf);
  }
  void log(infer_log_level level, const std::string& message) const {
    if (h_->log) h_->log(h_->host_ctx, level, message.c_str());
  }
  // The option as a string, or `fallback` when unset.
  std::string option(const char* key, const std::string& fallback = "") const {
    if (!INFER_HAS_FIELD(h_, infer_host_services, get_option) || !h_->get_option) return fallback;
    int64_t n = h_->get_option(h_->host_ctx, key, nullptr, 0);
    if (n < 0) return fallback;
    std::string value(static_cast<size_t>(n) + 1, '\0');
    h_->get_option(h_->host_ctx, key, value.data(), value.size());
    value.resize(static_cast<size_t>(n));
    return value;
  }
  // The precision the session allows for float32 arithmetic (infer_precision); FP32 from
  // a host older than ABI minor 3.
  infer_precision compute_precision() const {
    return INFER_HAS_FIELD(h_, infer_host_services, compute_precision) ? h_->compute_precision
                                                                       : INFER_PRECISION_FP32;
  }
  // True once the run `run` was cancelled. A NULL run, or a host without the optional
  // is_cancelled service, is never cancelled.
  bool cancelled(const infer_run_context* run) const {
    return run != nullptr && INFER_HAS_FIELD(h_, infer_host_services, is_cancelled) &&
           h_->is_cancelled != nullptr && h_->is_cancelled(h_->host_ctx, run);
  }
  // Runs fn(begin, end) over [0, n) on the host's threads.
  template <typename F>
  void parallel_for(size_t n, size_t grain, F&& fn) const {
    if (n == 0) return;
    auto trampoline = [](void* user, size_t b, size_t e) { (*static_cast<F*>(user))(b, e); };
    h_->parallel_for(h_->host_ctx, 0, n, grain == 0 ? 1 : grain, trampoline, &fn);
  }

 private:
  const infer_host_services* h_ = nullptr;
};

// Runs `body` (returning infer_status*) and turns any C++ exception into a status, so
// that nothing but a status ever crosses the ABI.
template <typename F>
infer_status* guarded(const Host& host, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return host.status(INFER_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return host.status(INFER_STATUS_INTERNAL, std::string("plugin exception: ") + e.what());
  } catch (...) {
    return host.status(INFER_STATUS_INTERNAL, "plugin exception of unknown type");
  }
}

// Read-only helpers over a node view.
inline const infer_attr_view* find_attr(const infer_node_view* node, std::string_view name) {
  for (size_t i = 0; i < node->num_attrs; ++i)
    if (name == node->attrs[i].name) return &node->attrs[i];
  return nullptr;
}
inline int64_t attr_int(const infer_node_view* node, std::string_view name, int64_t fallback) {
  const infer_attr_view* a = find_attr(node, name);
  return (a && a->type == INFER_ATTR_INT) ? a->i : fallback;
}
inline double attr_float(const infer_node_view* node, std::string_view name, double fallback) {
  const infer_attr_view* a = find_attr(node, name);
  return (a && a->type == INFER_ATTR_FLOAT) ? a->f : fallback;
}
inline std::string attr_string(const infer_node_view* node, std::string_view name,
                               const std::string& fallback) {
  const infer_attr_view* a = find_attr(node, name);
  return (a && a->type == INFER_ATTR_STRING) ? std::string(a->s, a->s_len) : fallback;
}
inline std::span<const int64_t> attr_ints(const infer_node_view* node, std::string_view name) {
  const infer_attr_view* a = find_attr(node, name);
  if (!a || a->type != INFER_ATTR_INTS || a->count == 0) return {};
  return {a->ints, a->count};
}
inline std::span<const double> attr_floats(const infer_node_view* node, std::string_view name) {
  const infer_attr_view* a = find_attr(node, name);
  if (!a || a->type != INFER_ATTR_FLOATS || a->count == 0) return {};
  return {a->floats, a->count};
}

// Input i of a node, or nullptr when absent (beyond num_inputs or omitted).
inline const infer_value_view* input(const infer_node_view* node, size_t i) {
  return i < node->num_inputs ? node->inputs[i] : nullptr;
}

// Copies `text` into a fixed-size reason buffer, truncating safely.
inline void set_reason(infer_capability* out, const std::string& text) {
  std::snprintf(out->reason, sizeof out->reason, "%s", text.c_str());
}

// Tells the host the node computes in `dtype` (see infer_capability.compute_dtype); does
// nothing for a host older than ABI minor 3, whose struct has no such field.
inline void set_compute_dtype(infer_capability* out, infer_dtype dtype) {
  if (INFER_HAS_FIELD(out, infer_capability, compute_dtype)) out->compute_dtype = dtype;
}

}  // namespace infer::sdk
