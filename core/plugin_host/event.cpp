#include "plugin_host/event.hpp"

#include <oneapi/tbb/task_arena.h>

#include <exception>
#include <utility>

#include "plugin_host/plugin_instance.hpp"
#include "plugin_host/status_bridge.hpp"
#include "plugin_host/tsan_annotations.hpp"

namespace infer::host {
namespace {

// How long one step of the emulated completion wait blocks before it checks whether
// the Event handle was dropped.
constexpr uint64_t kPollNs = 1'000'000;

struct NativeCallback {
  Event::Callback cb;
};

// The C callback handed to event_on_complete: called exactly once by the plugin.
void native_trampoline(void* user, const infer_status* status) {
  std::unique_ptr<NativeCallback> ctx(static_cast<NativeCallback*>(user));
  try {
    ctx->cb(view_status(status, "event"));
  } catch (...) {
    // The callback runs on a plugin thread; nothing may unwind into the plugin.
  }
}

void call_guarded(const Event::Callback& cb, const Status& status) {
  try {
    cb(status);
  } catch (...) {
    // Same rule as above: a throwing callback must not kill an arena worker.
  }
}

}  // namespace

Event::State::~State() {
  if (event != nullptr) owner->api().event_destroy(event);
}

Event::Event(std::shared_ptr<State> state) : state_(std::move(state)) {}

Event::Event(Event&& other) noexcept : state_(std::move(other.state_)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    drop();
    state_ = std::move(other.state_);
  }
  return *this;
}

Event::~Event() { drop(); }

void Event::drop() {
  if (state_) state_->dropped.store(true, std::memory_order_release);
  state_.reset();
}

infer_event* Event::raw() const { return state_ ? state_->event : nullptr; }

bool Event::has_native_on_complete() const {
  return state_ && state_->owner->api().event_on_complete != nullptr;
}

Status Event::wait(uint64_t value) const {
  if (!state_) return invalid_argument("wait on an empty event handle");
  return take_status(state_->owner->api().event_wait(state_->event, value, UINT64_MAX),
                     "plugin '" + state_->owner->name() + "': event_wait");
}

Result<bool> Event::wait_for(uint64_t value, std::chrono::nanoseconds timeout) const {
  if (!state_) return invalid_argument("wait on an empty event handle");
  int64_t ns = timeout.count();
  // UINT64_MAX means "forever" in the ABI; a finite timeout must never turn into it.
  uint64_t t = ns <= 0 ? 0 : static_cast<uint64_t>(ns);
  if (t == UINT64_MAX) t = UINT64_MAX - 1;
  infer_status_code code = INFER_STATUS_OK;
  Status st = take_status(state_->owner->api().event_wait(state_->event, value, t),
                          "plugin '" + state_->owner->name() + "': event_wait", &code);
  if (code == INFER_STATUS_TIMEOUT) return false;
  INFER_RETURN_IF_ERROR(st);
  return true;
}

Result<uint64_t> Event::query() const {
  if (!state_) return invalid_argument("query on an empty event handle");
  const infer_plugin_api& api = state_->owner->api();
  if (api.event_query == nullptr) {
    return unsupported("plugin '" + state_->owner->name() + "' provides no event_query");
  }
  uint64_t value = 0;
  INFER_RETURN_IF_ERROR(take_status(api.event_query(state_->event, &value),
                                    "plugin '" + state_->owner->name() + "': event_query"));
  return value;
}

Result<bool> Event::reached(uint64_t value) const {
  if (!state_) return invalid_argument("query on an empty event handle");
  if (state_->owner->api().event_query != nullptr) {
    INFER_ASSIGN_OR_RETURN(uint64_t now, query());
    return now >= value;
  }
  return wait_for(value, std::chrono::nanoseconds(0));
}

Status Event::signal_from_host(uint64_t value) const {
  if (!state_) return invalid_argument("signal on an empty event handle");
  const infer_plugin_api& api = state_->owner->api();
  if (api.event_signal_host == nullptr) {
    return unsupported("plugin '" + state_->owner->name() + "' provides no event_signal_host");
  }
  return take_status(api.event_signal_host(state_->event, value),
                     "plugin '" + state_->owner->name() + "': event_signal_host");
}

Status Event::on_complete(uint64_t value, Callback cb) const {
  if (!state_) return invalid_argument("on_complete on an empty event handle");
  if (!cb) return invalid_argument("on_complete without a callback");
  const infer_plugin_api& api = state_->owner->api();
  if (api.event_on_complete != nullptr) {
    auto ctx = std::make_unique<NativeCallback>(NativeCallback{std::move(cb)});
    infer_status* s = api.event_on_complete(state_->event, value, native_trampoline, ctx.get());
    if (s != nullptr) {
      // The plugin refused, so it will not call back: the context is still ours.
      return take_status(s, "plugin '" + state_->owner->name() + "': event_on_complete");
    }
    ctx.release();  // now owned by the pending callback
    return Status::ok();
  }
  // Fallback: a oneTBB task that waits on the host. It polls so that dropping the Event
  // handle ends the wait instead of pinning an arena thread forever; it shares the state,
  // so the plugin's event lives until the task is done.
  std::shared_ptr<State> state = state_;
  std::shared_ptr<tbb::task_arena> arena = state->owner->services().shared_arena();
  arena->enqueue(tsan::handoff([state, value, cb = std::move(cb)] {  // (tsan_annotations.hpp)
    const infer_plugin_api& a = state->owner->api();
    for (;;) {
      infer_status_code code = INFER_STATUS_OK;
      Status st = take_status(a.event_wait(state->event, value, kPollNs),
                              "plugin '" + state->owner->name() + "': event_wait", &code);
      if (code != INFER_STATUS_TIMEOUT) {
        call_guarded(cb, st);
        return;
      }
      if (state->dropped.load(std::memory_order_acquire)) {
        call_guarded(cb, Status(StatusCode::kCancelled,
                                "event dropped before it reached " + std::to_string(value)));
        return;
      }
    }
  }));
  return Status::ok();
}

}  // namespace infer::host
