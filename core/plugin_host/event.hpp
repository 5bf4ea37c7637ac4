// RAII wrapper over a plugin's timeline event (infer_event).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "infer/plugin_api.h"
#include "infer/status.hpp"

namespace infer::host {

class PluginInstance;

// Move-only handle; the plugin's event_destroy runs when the last user is gone (the
// handle, or a pending emulated completion callback, see on_complete).
class Event {
 public:
  // Receives OK, or the event's sticky failure.
  using Callback = std::function<void(const Status&)>;

  Event() = default;
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  bool valid() const { return state_ != nullptr; }
  infer_event* raw() const;

  // Blocks until the counter reaches `value`; returns the sticky failure if the work
  // that was to signal it failed.
  Status wait(uint64_t value) const;
  // Like wait, but gives up after `timeout`: true when reached, false on timeout.
  Result<bool> wait_for(uint64_t value, std::chrono::nanoseconds timeout) const;
  // The counter's current value (or the sticky failure). kUnsupported when the plugin
  // has no event_query.
  Result<uint64_t> query() const;
  // Whether the counter has reached `value`, without blocking. Uses event_query, or
  // falls back to event_wait with a zero timeout.
  Result<bool> reached(uint64_t value) const;
  // Sets the counter from the host. kUnsupported when the plugin has no
  // event_signal_host.
  Status signal_from_host(uint64_t value) const;

  // Calls `cb` exactly once when the counter reaches `value` or the event fails (maybe
  // at once, on the calling thread). `cb` must not block. Without the plugin's
  // event_on_complete, the host emulates it with a task in the plugin's oneTBB arena that
  // waits on the event (polling, so that dropping the Event ends the wait: `cb` then gets
  // kCancelled). With the plugin's event_on_complete, the Event must outlive the
  // callback.
  Status on_complete(uint64_t value, Callback cb) const;
  bool has_native_on_complete() const;

 private:
  friend class Device;
  // Shared between the handle and pending emulated callbacks; the last one destroys the
  // plugin's event.
  struct State {
    std::shared_ptr<const PluginInstance> owner;
    infer_event* event = nullptr;
    std::atomic<bool> dropped{false};  // the Event handle is gone
    State() = default;
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State();
  };
  explicit Event(std::shared_ptr<State> state);
  void drop();

  std::shared_ptr<State> state_;
};

}  // namespace infer::host
