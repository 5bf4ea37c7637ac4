#include "plugin_host/host_services.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>

#include "plugin_host/status_bridge.hpp"
#include "plugin_host/tsan_annotations.hpp"

// The host-side definition of the ABI's opaque task group. It remembers the arena its
// tasks run in, so run and wait always enter that arena, whichever thread calls them.
struct infer_task_group {
  tbb::task_arena* arena = nullptr;
  tbb::task_group group;
};

namespace infer::host {

struct HostServices::Impl {
  std::string name;
  std::shared_ptr<tbb::task_arena> arena;
  OptionList options;
  LogSink sink;
  infer_host_services table{};

  void log(LogLevel level, const std::string& message) const {
    std::string line = "[" + name + "] " + message;
    if (sink) {
      sink(level, line);
    } else if (level >= LogLevel::kWarning) {
      std::cerr << line << "\n";
    }
  }
};

namespace {

using Impl = HostServices::Impl;

Impl* impl_of(void* host_ctx) { return static_cast<Impl*>(host_ctx); }

// Every service is a C function: nothing may escape it, so each body is guarded.
void svc_log(void* host_ctx, infer_log_level level, const char* message) {
  try {
    impl_of(host_ctx)->log(to_log_level(level), message ? message : "(null message)");
  } catch (...) {
    // A failing log sink must not take the plugin down; the line is lost.
  }
}

infer_status* svc_status_create(void*, infer_status_code code, const char* message) {
  return make_status(code, message ? std::string_view(message) : std::string_view());
}

void svc_status_free(infer_status* status) { free_status(status); }

infer_status_code svc_status_code(const infer_status* status) {
  return status ? status->code : INFER_STATUS_OK;
}

const char* svc_status_message(const infer_status* status) {
  return status ? status->message.c_str() : "";
}

size_t svc_num_threads(void* host_ctx) {
  int n = impl_of(host_ctx)->arena->max_concurrency();
  return n > 0 ? static_cast<size_t>(n) : 1;
}

void svc_parallel_for(void* host_ctx, size_t begin, size_t end, size_t grain, infer_range_fn fn,
                      void* user) {
  if (fn == nullptr || end <= begin) return;
  if (grain == 0) grain = 1;
  Impl* impl = impl_of(host_ctx);
  // Split in whole multiples of `grain`, so every call except the one holding the end of
  // the range gets at least `grain` items, as the ABI promises plugins.
  const size_t count = end - begin;
  const size_t chunks = count / grain + (count % grain != 0 ? 1 : 0);
  try {
    // execute() runs inline when the caller already is in this arena (nested calls from
    // a plugin's own parallel body), and joins the arena otherwise. isolate(): while the
    // caller waits for the loop it runs only the loop's own chunks, never an unrelated
    // task of the arena (another node of a concurrent run). Plugins keep per-thread
    // scratch that a waiting caller's loop bodies still read; an unrelated task run on
    // that thread meanwhile could reuse or grow the same scratch under them.
    // (tsan: the hand-offs to oneTBB, see tsan_annotations.hpp.)
    auto chunk = tsan::handoff([&](const tbb::blocked_range<size_t>& r) {
      size_t b = begin + r.begin() * grain;
      size_t e = r.end() >= chunks ? end : begin + r.end() * grain;
      fn(user, b, e);
    });
    auto loop = tsan::handoff([&] {
      tbb::this_task_arena::isolate(
          [&] { tbb::parallel_for(tbb::blocked_range<size_t>(0, chunks), chunk); });
    });
    impl->arena->execute(loop);
    tsan::acquire();
  } catch (const std::exception& e) {
    impl->log(LogLevel::kError, std::string("parallel_for body threw: ") + e.what());
  } catch (...) {
    impl->log(LogLevel::kError, "parallel_for body threw an exception of unknown type");
  }
}

infer_task_group* svc_task_group_create(void* host_ctx) {
  try {
    auto* g = new infer_task_group;
    g->arena = impl_of(host_ctx)->arena.get();
    return g;
  } catch (...) {
    return nullptr;
  }
}

void svc_task_group_run(infer_task_group* group, infer_task_fn fn, void* user) {
  if (group == nullptr || fn == nullptr) return;
  try {
    // (tsan: the hand-offs to oneTBB, see tsan_annotations.hpp.)
    auto enqueue =
        tsan::handoff([&] { group->group.run(tsan::handoff([fn, user] { fn(user); })); });
    group->arena->execute(enqueue);
  } catch (...) {
    // Only allocation can fail here; the ABI has no way to report it, so run inline
    // rather than lose the task.
    fn(user);
  }
}

void svc_task_group_wait(infer_task_group* group) {
  if (group == nullptr) return;
  try {
    auto wait = tsan::handoff([&] { group->group.wait(); });
    group->arena->execute(wait);
    tsan::acquire();  // after every task of the group (see tsan_annotations.hpp)
  } catch (...) {
    // A task that threw: the exception cannot cross the ABI; the wait is over anyway.
  }
}

void svc_task_group_destroy(infer_task_group* group) {
  if (group == nullptr) return;
  // Waiting again is cheap and makes destroying an unwaited group safe instead of fatal.
  svc_task_group_wait(group);
  delete group;
}

void* svc_host_alloc(void*, size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* p = nullptr;
  // posix_memalign memory is released with plain free(), so host_free (and the owners of
  // prepacked constants) need not know the alignment.
  if (posix_memalign(&p, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  return p;
}

void svc_host_free(void*, void* ptr) { std::free(ptr); }

int64_t svc_get_option(void* host_ctx, const char* key, char* buf, size_t buf_size) {
  if (key == nullptr) return -1;
  for (const auto& [k, v] : impl_of(host_ctx)->options) {
    if (k != key) continue;
    if (buf != nullptr && buf_size > 0) {
      size_t n = v.size() < buf_size - 1 ? v.size() : buf_size - 1;
      std::memcpy(buf, v.data(), n);
      buf[n] = '\0';
    }
    return static_cast<int64_t>(v.size());
  }
  return -1;
}

bool svc_is_cancelled(void*, const infer_run_context* run) {
  return run != nullptr && run->is_cancelled();
}

}  // namespace

LogLevel to_log_level(infer_log_level level) {
  switch (level) {
    case INFER_LOG_DEBUG:
      return LogLevel::kDebug;
    case INFER_LOG_INFO:
      return LogLevel::kInfo;
    case INFER_LOG_WARNING:
      return LogLevel::kWarning;
    case INFER_LOG_ERROR:
      return LogLevel::kError;
    case INFER_LOG_LEVEL_MAX_ENUM:  // never a value (plugin_api.h)
      break;
  }
  return LogLevel::kError;  // an unknown level is treated as the most severe
}

infer_log_level to_abi_log_level(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return INFER_LOG_DEBUG;
    case LogLevel::kInfo:
      return INFER_LOG_INFO;
    case LogLevel::kWarning:
      return INFER_LOG_WARNING;
    case LogLevel::kError:
      return INFER_LOG_ERROR;
  }
  return INFER_LOG_ERROR;
}

HostServices::HostServices(std::string plugin_name, std::shared_ptr<tbb::task_arena> arena,
                           OptionList options, LogSink log_sink, infer_precision precision)
    : impl_(std::make_unique<Impl>()) {
  impl_->name = std::move(plugin_name);
  impl_->arena = arena ? std::move(arena) : std::make_shared<tbb::task_arena>();
  impl_->options = std::move(options);
  impl_->sink = std::move(log_sink);

  infer_host_services& t = impl_->table;
  t.struct_size = sizeof(infer_host_services);
  t.abi_major = INFER_ABI_VERSION_MAJOR;
  t.abi_minor = INFER_ABI_VERSION_MINOR;
  t.host_ctx = impl_.get();
  t.log = svc_log;
  t.status_create = svc_status_create;
  t.status_free = svc_status_free;
  t.status_code = svc_status_code;
  t.status_message = svc_status_message;
  t.num_threads = svc_num_threads;
  t.parallel_for = svc_parallel_for;
  t.task_group_create = svc_task_group_create;
  t.task_group_run = svc_task_group_run;
  t.task_group_wait = svc_task_group_wait;
  t.task_group_destroy = svc_task_group_destroy;
  t.host_alloc = svc_host_alloc;
  t.host_free = svc_host_free;
  t.get_option = svc_get_option;
  t.is_cancelled = svc_is_cancelled;
  t.compute_precision = precision;
}

HostServices::~HostServices() = default;

const infer_host_services* HostServices::table() const { return &impl_->table; }
const std::string& HostServices::plugin_name() const { return impl_->name; }
tbb::task_arena& HostServices::arena() const { return *impl_->arena; }
const std::shared_ptr<tbb::task_arena>& HostServices::shared_arena() const { return impl_->arena; }
const OptionList& HostServices::options() const { return impl_->options; }

void HostServices::log(LogLevel level, const std::string& message) const {
  try {
    impl_->log(level, message);
  } catch (...) {
    // Logging never fails its caller.
  }
}

std::optional<std::string> HostServices::option(const std::string& key) const {
  for (const auto& [k, v] : impl_->options)
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace infer::host
