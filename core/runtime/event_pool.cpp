#include "runtime/event_pool.hpp"

namespace infer::runtime {

Result<PooledEvent> EventPool::acquire() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      Slot s = std::move(free_.back());
      free_.pop_back();
      return PooledEvent{std::move(s.event), s.last + 1};
    }
  }
  INFER_ASSIGN_OR_RETURN(host::Event e, device_.create_event());
  return PooledEvent{std::move(e), 1};
}

void EventPool::release(PooledEvent event, Outcome outcome) {
  if (!event.event.valid()) return;
  std::lock_guard lock(mu_);
  switch (outcome) {
    case Outcome::kReached:
      free_.push_back(Slot{std::move(event.event), event.value});
      break;
    case Outcome::kUnused:
      free_.push_back(Slot{std::move(event.event), event.value - 1});
      break;
    case Outcome::kFailed:
      retired_.push_back(std::move(event.event));
      break;
  }
}

}  // namespace infer::runtime
