// ThreadSanitizer annotations for the places where the host hands work to oneTBB.
//
// Debian's oneTBB is not built with TSan, so the order its scheduler guarantees (what a
// thread did before it enqueued or spawned a task happens before the task runs; what the
// tasks of a parallel_for or task_group did happens before the wait for them returns) is
// invisible to TSan, which would report it as races in infer's code. Every body the host
// gives oneTBB (enqueue, task_group::run, task_arena::execute, parallel_for) is wrapped
// in handoff(): the wrapper releases once the body's state is in place, which is when
// its constructor (or oneTBB's copy or move of it into a task) has run, and acquires
// when the body starts; it releases again when the body ends, and the waiting side
// calls acquire() after its wait. They compile to nothing outside TSan builds
// (tools/sanitize.sh tsan): handoff(f) is then f itself.
//
// The address is one token for the whole process: computing a per-task address would
// read what the task captured before the acquire. The cost is that TSan sees more order
// than oneTBB gives (every hand-off orders after every earlier one), so it may miss a
// race between two tasks; it never reports one that cannot happen.
#pragma once

#include <type_traits>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define INFER_HAVE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define INFER_HAVE_TSAN 1
#endif
#endif

#ifdef INFER_HAVE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace infer::host::tsan {

#ifdef INFER_HAVE_TSAN
inline char handoff_token;
inline void release() { __tsan_release(&handoff_token); }
inline void acquire() { __tsan_acquire(&handoff_token); }

// Orders a Handoff's whole life: acquire() before its body's state is written (as a base
// class, before the member), release() after that state is destroyed. oneTBB recycles task
// memory through its uninstrumented small-object pool: the next task built in the same
// bytes on another thread must come after this one's destruction.
struct HandoffFence {
  HandoffFence() { acquire(); }
  HandoffFence(const HandoffFence&) : HandoffFence() {}
  ~HandoffFence() { release(); }
};

template <typename F>
class Handoff : private HandoffFence {
 public:
  explicit Handoff(F f) : f_(std::move(f)) { published(); }
  Handoff(const Handoff& other) : HandoffFence(), f_(other.f_) { published(); }
  Handoff(Handoff&& other) noexcept : HandoffFence(), f_(std::move(other.f_)) { published(); }
  Handoff& operator=(const Handoff&) = delete;
  Handoff& operator=(Handoff&&) = delete;

  template <typename... Args>
  void operator()(Args&&... args) const {
    acquire();
    f_(std::forward<Args>(args)...);
    release();
  }

 private:
  void published() {
    // The compiler may otherwise sink the stores into f_ below the release: until the
    // wrapper's address escapes (into oneTBB), no call could see them.
    asm volatile("" : : "r"(this) : "memory");
    release();
  }
  F f_;
};
template <typename F>
Handoff<std::decay_t<F>> handoff(F&& f) {
  return Handoff<std::decay_t<F>>(std::forward<F>(f));
}
#else
inline void release() {}
inline void acquire() {}
template <typename F>
F&& handoff(F&& f) {
  return std::forward<F>(f);
}
#endif

}  // namespace infer::host::tsan
