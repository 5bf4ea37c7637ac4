// ThreadSanitizer annotations for the places where the host hands work to oneTBB.
//
// Debian's oneTBB is not built with TSan, so the order its scheduler guarantees (what a
// thread did before it enqueued or spawned a task happens before the task runs; what the
// tasks of a parallel_for or task_group did happens before the wait for them returns) is
// invisible to TSan, which would report it as races in infer's code. release() before a
// hand-off and acquire() where the other side starts (or after the wait) state that edge.
// They compile to nothing outside TSan builds (tools/sanitize.sh tsan).
//
// The address is one token for the whole process: computing a per-task address would
// read what the task captured before the acquire. The cost is that TSan sees more order
// than oneTBB gives (every hand-off orders after every earlier one), so it may miss a
// race between two tasks; it never reports one that cannot happen.
#pragma once

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
#else
inline void release() {}
inline void acquire() {}
#endif

}  // namespace infer::host::tsan
