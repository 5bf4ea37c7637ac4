// Header-only glue between a plugin's C++ objects and the C ABI: the pieces every plugin
// writes again around plugin_api.h, written once.
//
// plugin.hpp wraps the host services; this header builds on it with what sits between
// the ABI's entry points and a plugin's own classes:
//  - a failure type that a plugin passes around internally and turns into a host status
//    only at the ABI edge (Failure, to_status, take_status);
//  - the shim of an ABI entry point: argument checks with uniform messages, the guard
//    that keeps exceptions from crossing the ABI, and the casts between opaque handles and
//    C++ objects (EntryPoint, INFER_SDK_HANDLE, make_handle);
//  - the host-visible half of a timeline event: counter, sticky failure, waits and
//    completion callbacks (Timeline);
//  - owned copies of what a graph view describes, since views are valid only during the
//    call (TensorInfo, NodeInfo, partition_name, constant_dims);
//  - the checks of execute's and copy_batch's arguments against what was compiled
//    (check_execute_args, check_input_tensor, check_tensor_memory, check_copy_region).
//
// Like plugin.hpp it depends on nothing but plugin_api.h and the C++20 standard library,
// and nothing here is part of the ABI: a plugin may use any subset, or none. Every
// function that an ABI entry point calls either cannot throw or runs inside the guard.
// Messages that these helpers return describe the problem only ("input 0 'x' has rank
// 3, expected 4"); the plugin puts its own prefix in front (its name, the function and
// the partition), so that its messages stay in one voice.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "infer/plugin.hpp"

namespace infer::sdk {

// ---- Failures inside a plugin ----------------------------------------------------------
//
// A status must be created by the host's status_create and handed to exactly one owner,
// while a failure inside a plugin is often shared (a failed kernel fails every event
// signalled after it, and each waiter gets its own status). So a plugin passes Failure
// values around and makes a host status only at the ABI boundary (to_status).

// A failure: the status code the ABI will report and the complete message.
struct Failure {
  infer_status_code code = INFER_STATUS_INTERNAL;
  std::string message;
};

// nullopt means success, like a NULL infer_status*.
using MaybeFailure = std::optional<Failure>;

inline Failure failure(infer_status_code code, std::string message) {
  return Failure{code, std::move(message)};
}

// Converts at the ABI boundary: a new host-owned status, or NULL for success.
inline infer_status* to_status(const Host& host, const MaybeFailure& f) {
  return f ? host.status(f->code, f->message) : nullptr;
}

// Takes over a status that a host service returned (for example alloc_output): its code,
// and its message with `context` in front, as a Failure. The status is freed, because
// receiving a status means owning it.
inline Failure take_status(const Host& host, infer_status* s, const std::string& context) {
  const infer_host_services* h = host.raw();
  Failure f{h->status_code(s), context + h->status_message(s)};
  h->status_free(s);
  return f;
}

// ---- Names for messages ----------------------------------------------------------------

// A value's name. Views come from the host, and a NULL name must not turn an error
// message into a crash.
inline std::string value_name(const infer_value_view* v) {
  return v != nullptr && v->name != nullptr ? v->name : "";
}

// "float32", "int64", ...; a value outside the enumeration (a C host may pass any int)
// reads as "dtype(N)".
inline std::string dtype_name(infer_dtype dtype) {
  switch (dtype) {
    case INFER_DTYPE_UNDEFINED:
      return "undefined";
    case INFER_DTYPE_FLOAT32:
      return "float32";
    case INFER_DTYPE_UINT8:
      return "uint8";
    case INFER_DTYPE_INT8:
      return "int8";
    case INFER_DTYPE_UINT16:
      return "uint16";
    case INFER_DTYPE_INT16:
      return "int16";
    case INFER_DTYPE_INT32:
      return "int32";
    case INFER_DTYPE_INT64:
      return "int64";
    case INFER_DTYPE_STRING:
      return "string";
    case INFER_DTYPE_BOOL:
      return "bool";
    case INFER_DTYPE_FLOAT16:
      return "float16";
    case INFER_DTYPE_FLOAT64:
      return "float64";
    case INFER_DTYPE_UINT32:
      return "uint32";
    case INFER_DTYPE_UINT64:
      return "uint64";
    case INFER_DTYPE_COMPLEX64:
      return "complex64";
    case INFER_DTYPE_COMPLEX128:
      return "complex128";
    case INFER_DTYPE_BFLOAT16:
      return "bfloat16";
    case INFER_DTYPE_FLOAT8E4M3FN:
      return "float8e4m3fn";
    case INFER_DTYPE_FLOAT8E4M3FNUZ:
      return "float8e4m3fnuz";
    case INFER_DTYPE_FLOAT8E5M2:
      return "float8e5m2";
    case INFER_DTYPE_FLOAT8E5M2FNUZ:
      return "float8e5m2fnuz";
    case INFER_DTYPE_UINT4:
      return "uint4";
    case INFER_DTYPE_INT4:
      return "int4";
    case INFER_DTYPE_MAX_ENUM:  // never a value (plugin_api.h)
      break;
  }
  return "dtype(" + std::to_string(static_cast<int>(dtype)) + ")";
}

// "[2,3,4]"; -1 stands for an unknown dim.
inline std::string dims_text(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// ---- Handles -------------------------------------------------------------------------
//
// The ABI's handles (infer_plugin, infer_buffer, ...) are incomplete C structs that the
// host only stores and passes back. Each stands for one of the plugin's C++ objects. A
// pointer cast to an incomplete type and back yields the original pointer, and nothing is
// ever read through the handle type itself, so a reinterpret_cast each way is all it
// takes. INFER_SDK_HANDLE(infer_device, Device) defines, in the namespace where it is
// used, to_handle(Device*) and from_handle(infer_device*): one pair per handle type, so a
// device handle can never be cast to a stream by mistake.
#define INFER_SDK_HANDLE(Handle, Object)                                         \
  inline Handle* to_handle(Object* o) { return reinterpret_cast<Handle*>(o); }   \
  inline Object* from_handle(Handle* h) { return reinterpret_cast<Object*>(h); } \
  inline const Object* from_handle(const Handle* h) { return reinterpret_cast<const Object*>(h); }

// Creates an object through `make(&unique_ptr)` (which returns a MaybeFailure) and, when
// it succeeds, hands it to the host as *out through the plugin's to_handle. The object is
// released to the host only after it was fully made, so a failure leaks nothing.
template <typename Object, typename Handle, typename Make>
MaybeFailure make_handle(Handle** out, Make&& make) {
  std::unique_ptr<Object> object;
  if (MaybeFailure f = make(&object)) return f;
  *out = to_handle(object.release());
  return std::nullopt;
}

// ---- Entry points --------------------------------------------------------------------

// The shim of one ABI entry point: it knows the host (to make statuses), the plugin's
// name and the function's name (to say who complains about what), and runs the body so
// that nothing but a status leaves it. Typical use:
//
//   infer_status* stream_create(infer_device* d, infer_stream** out) {
//     Device* device = from_handle(d);
//     const sdk::EntryPoint entry(device->host(), "example", "stream_create");
//     if (out == nullptr) return entry.null_argument("out");
//     return entry.run([&] { *out = to_handle(new Stream(*device)); });
//   }
class EntryPoint {
 public:
  EntryPoint(const Host& host, const char* plugin, const char* function)
      : host_(host), plugin_(plugin), function_(function) {}

  const Host& host() const { return host_; }

  // INVALID_ARGUMENT "<plugin>: <function>: <what> is NULL", for a required pointer
  // argument that the caller left NULL (`what` may name several: "graph or out").
  infer_status* null_argument(const char* what) const {
    return host_.error(INFER_STATUS_INVALID_ARGUMENT, "%s: %s: %s is NULL", plugin_, function_,
                       what);
  }

  // A status "<plugin>: <function>: <what>".
  infer_status* error(infer_status_code code, const std::string& what) const {
    return host_.status(code, std::string(plugin_) + ": " + function_ + ": " + what);
  }

  // Runs the body under `guarded` (exceptions become statuses) and converts what it
  // returns: nothing (success), an infer_status* (passed on as it is) or a MaybeFailure
  // (turned into a status with to_status).
  template <typename F>
  infer_status* run(F&& body) const noexcept {
    return guarded(host_, [&]() -> infer_status* {
      using R = std::invoke_result_t<F&>;
      if constexpr (std::is_void_v<R>) {
        body();
        return nullptr;
      } else if constexpr (std::is_convertible_v<R, infer_status*>) {
        return body();
      } else {
        static_assert(std::is_convertible_v<R, MaybeFailure>,
                      "an entry point body returns void, infer_status* or MaybeFailure");
        return to_status(host_, body());
      }
    });
  }

 private:
  Host host_;
  const char* plugin_;
  const char* function_;
};

// The deadline of a wait of `timeout_ns` nanoseconds from now; nullopt means wait
// forever. UINT64_MAX means forever; so, in practice, does anything beyond a century, and
// capping there keeps the deadline arithmetic from overflowing.
inline std::optional<std::chrono::steady_clock::time_point> deadline_after(uint64_t timeout_ns) {
  constexpr uint64_t kCentury = uint64_t{100} * 365 * 24 * 3600 * 1000000000ull;
  if (timeout_ns >= kCentury) return std::nullopt;
  return std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
}

// ---- Timeline events -----------------------------------------------------------------
//
// The state of an infer_event as the host sees it: a 64-bit counter that only grows, a
// sticky failure, and the completion callbacks. A plugin's event class holds one (or
// derives from it) and adds what its device needs (a timeline semaphore, a fence).
//
// A failure sticks: once work that was to signal the event fails, the counter never
// advances again and every later wait, query and callback sees the failure, so a
// consumer waiting for value 7 cannot mistake "the producer died" for "not yet".
// Callbacks always run with no lock held, so they may call back into the plugin (for
// example to enqueue more work), but not wait on the same event.
class Timeline {
 public:
  // `plugin` prefixes the messages the timeline makes itself ("example: ...").
  Timeline(const Host& host, std::string plugin) : host_(host), plugin_(std::move(plugin)) {}
  // Fires the callbacks still pending (see cancel_callbacks), so that every registered
  // callback runs exactly once, as the ABI promises.
  ~Timeline() { cancel_callbacks(); }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  const Host& host() const { return host_; }

  // Raises the counter to `value` (a lower value leaves it unchanged: the counter only
  // grows) and runs the callbacks it satisfies. No effect once failed.
  void advance(uint64_t value) {
    std::vector<Callback> ready;
    {
      std::lock_guard lock(mu_);
      if (failure_ || value <= counter_) return;
      counter_ = value;
      ready = take_ready();
    }
    cv_.notify_all();
    fire(ready, std::nullopt);
  }

  // Makes `f` the sticky failure (the first failure wins) and completes every callback.
  void fail(const Failure& f) {
    std::vector<Callback> ready;
    {
      std::lock_guard lock(mu_);
      if (failure_) return;
      failure_ = f;
      ready = take_ready();
    }
    cv_.notify_all();
    fire(ready, f);
  }

  // What event_signal_host must refuse: the sticky failure, or a value below the counter
  // (the host's mistake: INVALID_ARGUMENT). nullopt when the signal may go ahead.
  MaybeFailure check_host_signal(uint64_t value) const {
    std::lock_guard lock(mu_);
    if (failure_) return failure_;
    if (value < counter_)
      return failure(INFER_STATUS_INVALID_ARGUMENT,
                     plugin_ + ": event_signal_host: value " + std::to_string(value) +
                         " is below the counter " + std::to_string(counter_) +
                         " (timeline counters only grow)");
    return std::nullopt;
  }

  // The host-side signal: check_host_signal, then advance.
  MaybeFailure signal_from_host(uint64_t value) {
    if (MaybeFailure f = check_host_signal(value)) return f;
    advance(value);
    return std::nullopt;
  }

  enum class WaitResult { kReached, kFailed, kTimedOut };
  // Blocks until the counter reaches `value`, the event fails (then *failure_out is set)
  // or `deadline` passes; no deadline means wait forever. It also waits for the callbacks
  // that the reaching signal (or failure) released to return: a host may free a
  // callback's `user` data as soon as its own wait for the same value returns.
  WaitResult wait(uint64_t value, std::optional<std::chrono::steady_clock::time_point> deadline,
                  Failure* failure_out) {
    std::unique_lock lock(mu_);
    auto done = [&] { return (failure_.has_value() || counter_ >= value) && firing_ == 0; };
    if (deadline) {
      if (!cv_.wait_until(lock, *deadline, done)) return WaitResult::kTimedOut;
    } else {
      cv_.wait(lock, done);
    }
    // A failure wins over a reached value: "every later wait returns that failure".
    if (failure_) {
      *failure_out = *failure_;
      return WaitResult::kFailed;
    }
    return WaitResult::kReached;
  }

  // event_wait as the ABI states it: NULL when the value was reached, the sticky failure,
  // or TIMEOUT "<plugin>: event_wait for value V timed out after T ns".
  infer_status* wait_status(uint64_t value, uint64_t timeout_ns) {
    Failure f;
    switch (wait(value, deadline_after(timeout_ns), &f)) {
      case WaitResult::kReached:
        return nullptr;
      case WaitResult::kFailed:
        return host_.status(f.code, f.message);
      case WaitResult::kTimedOut:
        break;
    }
    return host_.error(INFER_STATUS_TIMEOUT,
                       "%s: event_wait for value %llu timed out after %llu ns", plugin_.c_str(),
                       static_cast<unsigned long long>(value),
                       static_cast<unsigned long long>(timeout_ns));
  }

  // The counter, or the sticky failure.
  MaybeFailure query(uint64_t* value) const {
    std::lock_guard lock(mu_);
    *value = counter_;
    return failure_;
  }

  // True when the counter reached `value` or the event failed: a waiter can tell now.
  bool resolved(uint64_t value) const {
    std::lock_guard lock(mu_);
    return failure_.has_value() || counter_ >= value;
  }

  // The sticky failure, if any.
  MaybeFailure failure_state() const {
    std::lock_guard lock(mu_);
    return failure_;
  }

  // Calls cb(user, status) once the counter reaches `value` or the event fails: right
  // away on this thread if that already happened, else later on whichever thread
  // advances or fails the event. The status is borrowed for the call.
  void on_complete(uint64_t value, infer_event_callback_fn cb, void* user) {
    MaybeFailure now;
    {
      std::lock_guard lock(mu_);
      if (!failure_ && counter_ < value) {
        pending_.push_back(Callback{value, cb, user});
        return;
      }
      now = failure_;
      ++firing_;
    }
    fire({Callback{value, cb, user}}, now);
  }

  // event_destroy: calls every pending callback with the sticky failure, or CANCELLED
  // when there is none, so that each `user` is released exactly once.
  void cancel_callbacks() {
    std::vector<Callback> left;
    MaybeFailure f;
    {
      std::lock_guard lock(mu_);
      left = std::move(pending_);
      pending_.clear();
      if (left.empty()) return;
      f = failure_ ? failure_
                   : MaybeFailure(failure(INFER_STATUS_CANCELLED,
                                          plugin_ + ": event destroyed before its callbacks' "
                                                    "values were reached"));
      ++firing_;
    }
    fire(left, f);
  }

 private:
  struct Callback {
    uint64_t value;
    infer_event_callback_fn fn;
    void* user;
  };

  // Removes and returns the pending callbacks satisfied by the current state; the caller
  // holds mu_ and then calls fire() without it.
  std::vector<Callback> take_ready() {
    std::vector<Callback> ready, still_pending;
    for (const Callback& cb : pending_)
      (failure_ || cb.value <= counter_ ? ready : still_pending).push_back(cb);
    pending_ = std::move(still_pending);
    if (!ready.empty()) ++firing_;  // fire() counts it down
    return ready;
  }

  // Runs callbacks outside the lock (`f`: the failure to report, if any), then lets the
  // waiters that were held for them go.
  void fire(const std::vector<Callback>& callbacks, const MaybeFailure& f) {
    if (callbacks.empty()) return;
    // The callback borrows the status for the call; we own it and free it afterwards.
    infer_status* status = to_status(host_, f);
    for (const Callback& cb : callbacks) cb.fn(cb.user, status);
    if (status != nullptr) host_.raw()->status_free(status);
    {
      std::lock_guard lock(mu_);
      --firing_;
    }
    cv_.notify_all();
  }

  Host host_;
  std::string plugin_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t counter_ = 0;           // guarded by mu_
  MaybeFailure failure_;           // guarded by mu_
  std::vector<Callback> pending_;  // guarded by mu_
  int firing_ = 0;                 // batches of callbacks running now; guarded by mu_
};

// ---- Owned copies of graph views -----------------------------------------------------

// The dtype and shape a graph view declares for a value, copied: what an executable
// checks the tensors of every execution against.
struct TensorInfo {
  infer_dtype dtype = INFER_DTYPE_UNDEFINED;  // UNDEFINED: any dtype
  int64_t rank = -1;                          // -1: any rank
  std::vector<int64_t> dims;                  // -1 for an unknown or symbolic dim

  static TensorInfo of(const infer_value_view& v) {
    TensorInfo info;
    info.dtype = v.dtype;
    info.rank = v.rank;
    if (v.rank > 0 && v.dims != nullptr) info.dims.assign(v.dims, v.dims + v.rank);
    return info;
  }
};

// One attribute, copied out of a node view.
struct Attribute {
  infer_attr_type type = INFER_ATTR_UNDEFINED;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

// A node as an executable keeps it: the node view copied, since the view is only valid
// during compile. Tensor and graph attributes are not copied (a plugin that needs them
// reads them from the view while compiling).
struct NodeInfo {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ONNX
  int64_t opset = 0;
  std::map<std::string, Attribute> attrs;
  size_t num_inputs = 0;   // including omitted optional inputs
  size_t num_outputs = 0;  // including omitted optional outputs

  static NodeInfo of(const infer_node_view& node) {
    NodeInfo info;
    info.name = node.name ? node.name : "";
    info.op_type = node.op_type ? node.op_type : "";
    info.domain = node.domain ? node.domain : "";
    info.opset = node.opset;
    info.num_inputs = node.num_inputs;
    info.num_outputs = node.num_outputs;
    for (size_t i = 0; i < node.num_attrs; ++i) {
      const infer_attr_view& a = node.attrs[i];
      if (a.name == nullptr) continue;
      Attribute attr;
      attr.type = a.type;
      attr.i = a.i;
      attr.f = a.f;
      if (a.s) attr.s.assign(a.s, a.s_len);
      if (a.type == INFER_ATTR_INTS && a.ints) attr.ints.assign(a.ints, a.ints + a.count);
      if (a.type == INFER_ATTR_FLOATS && a.floats) attr.floats.assign(a.floats, a.floats + a.count);
      info.attrs[a.name] = std::move(attr);
    }
    return info;
  }

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  // The attribute `key` when it is there with the right type, else `fallback`.
  int64_t attr_int(const std::string& key, int64_t fallback) const {
    const Attribute* a = find(key, INFER_ATTR_INT);
    return a ? a->i : fallback;
  }
  double attr_float(const std::string& key, double fallback) const {
    const Attribute* a = find(key, INFER_ATTR_FLOAT);
    return a ? a->f : fallback;
  }
  std::string attr_string(const std::string& key, const std::string& fallback) const {
    const Attribute* a = find(key, INFER_ATTR_STRING);
    return a ? a->s : fallback;
  }
  std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> fallback) const {
    const Attribute* a = find(key, INFER_ATTR_INTS);
    return a ? a->ints : fallback;
  }
  std::vector<double> attr_floats(const std::string& key, std::vector<double> fallback) const {
    const Attribute* a = find(key, INFER_ATTR_FLOATS);
    return a ? a->floats : fallback;
  }
  // "node 'conv1' (Conv)": the prefix of every message about this node.
  std::string describe() const { return "node '" + name + "' (" + op_type + ")"; }

 private:
  const Attribute* find(const std::string& key, infer_attr_type type) const {
    auto it = attrs.find(key);
    return it != attrs.end() && it->second.type == type ? &it->second : nullptr;
  }
};

// "node 'conv1' (Conv)": how messages name a node of a view (NodeInfo::describe for a copy).
inline std::string node_label(const infer_node_view& node) {
  return "node '" + std::string(node.name ? node.name : "") + "' (" +
         std::string(node.op_type ? node.op_type : "") + ")";
}

// The name of the partition being compiled, for messages and logs: the compile options'
// partition_name, else the graph's name, else "partition".
inline std::string partition_name(const infer_graph_view& graph,
                                  const infer_compile_options* options) {
  if (INFER_HAS_FIELD(options, infer_compile_options, partition_name) && options->partition_name)
    return options->partition_name;
  if (graph.name) return graph.name;
  return "partition";
}

// The concrete dims of constant `v` into *dims, or why it has none: "constant 'w' has an
// unknown shape" or "... has a symbolic dim". A plugin uploads constants at compile time,
// so every dim must be known.
inline std::optional<std::string> constant_dims(const infer_value_view& v,
                                                std::vector<int64_t>* dims) {
  if (v.rank < 0 || (v.rank > 0 && v.dims == nullptr))
    return "constant '" + value_name(&v) + "' has an unknown shape";
  dims->assign(v.dims, v.dims + v.rank);
  for (int64_t d : *dims)
    if (d < 0) return "constant '" + value_name(&v) + "' has a symbolic dim";
  return std::nullopt;
}

// The numbering of a graph view's values while a plugin copies the view into its own
// program. Within one view a value is identified by its pointer (see plugin_api.h), so the
// plugin gives each distinct infer_value_view* one id of its own and resolves every node
// input through it: graph inputs first, then constants as nodes first read them, then node
// outputs in topological order. The checks return the problem ("graph input 'x' is listed
// twice"); the plugin puts the partition in front.
class ValueIds {
 public:
  // The id given to `v`, or nullopt.
  std::optional<size_t> find(const infer_value_view* v) const {
    auto it = ids_.find(v);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  void assign(const infer_value_view* v, size_t id) { ids_[v] = id; }

  // Graph input `i` before it gets its id: not NULL, and not listed twice.
  std::optional<std::string> check_graph_input(size_t i, const infer_value_view* v) const {
    if (v == nullptr) return "graph input " + std::to_string(i) + " is NULL";
    if (ids_.count(v)) return "graph input '" + value_name(v) + "' is listed twice";
    return std::nullopt;
  }

  // What input `v` of a node refers to. kKnown sets *id.
  enum class Input {
    kOmitted,   // an omitted optional input (NULL)
    kKnown,     // a graph input, an earlier node's output, or a constant already numbered
    kConstant,  // a constant seen for the first time: the plugin uploads and numbers it
    kUnknown,   // none of these: the view is malformed (see unknown_input)
  };
  Input classify(const infer_value_view* v, size_t* id) const {
    if (v == nullptr) return Input::kOmitted;
    if (std::optional<size_t> known = find(v)) {
      *id = *known;
      return Input::kKnown;
    }
    return v->const_data != nullptr ? Input::kConstant : Input::kUnknown;
  }
  // The message for a kUnknown input `v` of the node `node_label` ("node 'a' (Add)").
  static std::string unknown_input(const std::string& node_label, const infer_value_view* v) {
    return node_label + ": input '" + value_name(v) +
           "' is neither a graph input, a constant, nor an earlier node's output";
  }

  // Output `v` of the node `node_label` before it gets its id: not defined before (a
  // graph's values each have one producer).
  std::optional<std::string> check_node_output(const std::string& node_label,
                                               const infer_value_view* v) const {
    if (v != nullptr && ids_.count(v))
      return node_label + ": output '" + value_name(v) + "' is already defined";
    return std::nullopt;
  }

 private:
  std::unordered_map<const infer_value_view*, size_t> ids_;
};

// "node n is NULL" for a NULL entry of a graph view's node list, else nullopt.
inline std::optional<std::string> check_node_entry(const infer_graph_view& graph, size_t n) {
  if (graph.nodes[n] == nullptr) return "node " + std::to_string(n) + " is NULL";
  return std::nullopt;
}

// The walk with which compile copies a graph view: every graph input in binding order
// (checked with ValueIds::check_graph_input, then `on_input(value)`, which numbers it),
// then every node in topological order (checked with check_node_entry, then
// `on_node(node)`, which returns a MaybeFailure). A malformed list is INVALID_ARGUMENT,
// "<context><problem>". Graph outputs are left to the plugin, since what a plugin can
// return (only node outputs, or also inputs and constants) differs.
template <typename OnInput, typename OnNode>
MaybeFailure walk_graph(const infer_graph_view& graph, const ValueIds& ids,
                        const std::string& context, OnInput&& on_input, OnNode&& on_node) {
  for (size_t i = 0; i < graph.num_inputs; ++i) {
    if (std::optional<std::string> why = ids.check_graph_input(i, graph.inputs[i]))
      return failure(INFER_STATUS_INVALID_ARGUMENT, context + *why);
    on_input(*graph.inputs[i]);
  }
  for (size_t n = 0; n < graph.num_nodes; ++n) {
    if (std::optional<std::string> why = check_node_entry(graph, n))
      return failure(INFER_STATUS_INVALID_ARGUMENT, context + *why);
    if (MaybeFailure f = on_node(*graph.nodes[n])) return f;
  }
  return std::nullopt;
}

// ---- Checking execute's and copy_batch's arguments ----------------------------------

// Checks the infer_execute_args struct of an execution of an executable compiled with
// `num_inputs` inputs and `num_outputs` outputs: the struct's size, the counts, the
// arrays that must be there, and that every wait and signal names an event. nullopt
// when the arguments are well-formed.
inline std::optional<std::string> check_execute_args(const infer_execute_args* args,
                                                     size_t num_inputs, size_t num_outputs) {
  if (!INFER_HAS_FIELD(args, infer_execute_args, signals))
    return "infer_execute_args.struct_size " +
           std::to_string(args != nullptr ? args->struct_size : 0) + " is too small";
  if (args->num_inputs != num_inputs)
    return "got " + std::to_string(args->num_inputs) + " inputs, expected " +
           std::to_string(num_inputs);
  if (args->num_outputs != num_outputs)
    return "got " + std::to_string(args->num_outputs) + " outputs, expected " +
           std::to_string(num_outputs);
  if (args->num_outputs > 0 && args->alloc_output == nullptr) return "alloc_output is NULL";
  if ((args->num_inputs > 0 && args->inputs == nullptr) ||
      (args->num_waits > 0 && args->waits == nullptr) ||
      (args->num_signals > 0 && args->signals == nullptr))
    return "an array of inputs, waits or signals is NULL but its count is not 0";
  for (size_t i = 0; i < args->num_waits; ++i)
    if (args->waits[i].event == nullptr) return "wait " + std::to_string(i) + " has no event";
  for (size_t i = 0; i < args->num_signals; ++i)
    if (args->signals[i].event == nullptr) return "signal " + std::to_string(i) + " has no event";
  return std::nullopt;
}

// "input 2 'x'": how messages name input `index` of an execution.
inline std::string input_label(size_t index, const std::string& name) {
  return "input " + std::to_string(index) + " '" + name + "'";
}

// Checks input tensor `t` (labelled `label` in messages) against the type and shape the
// graph view declared: struct size, dtype (unless UNDEFINED), rank (unless -1), every
// dim (unless -1), and that no dim is negative. On success *dims holds its dims.
inline std::optional<std::string> check_input_tensor(const infer_tensor& t,
                                                     const std::string& label,
                                                     const TensorInfo& expected,
                                                     std::vector<int64_t>* dims) {
  // INFER_HAS_FIELD on a reference, which cannot be NULL (GCC warns about the NULL test).
  if (t.struct_size < offsetof(infer_tensor, size_bytes) + sizeof t.size_bytes)
    return label + ": infer_tensor.struct_size is too small";
  if (expected.dtype != INFER_DTYPE_UNDEFINED && t.dtype != expected.dtype)
    return label + " is " + dtype_name(t.dtype) + ", expected " + dtype_name(expected.dtype);
  if (expected.rank >= 0 && t.rank != static_cast<size_t>(expected.rank))
    return label + " has rank " + std::to_string(t.rank) + ", expected " +
           std::to_string(expected.rank);
  if (t.rank > 0 && t.dims == nullptr) return label + " has no dims";
  dims->assign(t.dims, t.dims + t.rank);
  for (size_t d = 0; d < dims->size(); ++d) {
    const bool fixed = d < expected.dims.size() && expected.dims[d] >= 0;
    if ((*dims)[d] < 0 || (fixed && (*dims)[d] != expected.dims[d]))
      return label + " has dims " + dims_text(*dims) + ", expected " + dims_text(expected.dims) +
             " (-1: any)";
  }
  return std::nullopt;
}

// What a plugin knows about the buffer a tensor names, for check_tensor_memory.
struct BufferExtent {
  size_t size = 0;              // the buffer's size in bytes
  bool on_this_device = false;  // whether it belongs to the executing device
};

// True when [offset, offset + bytes) lies inside a buffer of `size` bytes (without
// overflowing for huge offsets).
inline bool range_fits(size_t size, size_t offset, size_t bytes) {
  return offset <= size && bytes <= size - offset;
}

// Checks that tensor `t` has the `needed` bytes of memory of the executing device.
// `buffer` describes the buffer t.buffer names, nullopt when t.buffer is NULL.
inline std::optional<std::string> check_tensor_memory(const infer_tensor& t,
                                                      const std::string& label, size_t needed,
                                                      std::optional<BufferExtent> buffer) {
  if (!buffer) return label + " has no buffer";
  if (!buffer->on_this_device) return label + " is in another device's buffer";
  if (t.size_bytes < needed || !range_fits(buffer->size, t.offset, needed))
    return label + " needs " + std::to_string(needed) + " bytes at offset " +
           std::to_string(t.offset) + " of a " + std::to_string(buffer->size) +
           "-byte buffer (size_bytes " + std::to_string(t.size_bytes) + ")";
  return std::nullopt;
}

// Checks the form of one copy_batch region: its struct size, exactly one source and one
// destination, and not host to host (which is a memcpy, not a device copy). Buffers and
// offsets are the plugin's to check.
inline std::optional<std::string> check_copy_region(const infer_copy_region& r) {
  if (r.struct_size < offsetof(infer_copy_region, size_bytes) + sizeof r.size_bytes)
    return "struct_size " + std::to_string(r.struct_size) + " is too small";
  if ((r.src_host == nullptr) == (r.src_buffer == nullptr))
    return "set exactly one of src_host and src_buffer";
  if ((r.dst_host == nullptr) == (r.dst_buffer == nullptr))
    return "set exactly one of dst_host and dst_buffer";
  if (r.src_host != nullptr && r.dst_host != nullptr)
    return "host-to-host copies are not the device's business (use memcpy)";
  return std::nullopt;
}

}  // namespace infer::sdk
