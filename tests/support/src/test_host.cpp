#include "infer/test_support/test_host.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

// The opaque host-owned handles of the ABI get their definitions here: the test host is
// the host.
struct infer_status {
  infer_status_code code;
  std::string message;
};

struct infer_task_group {
  std::mutex mu;
  std::vector<std::thread> threads;
};

namespace infer::test {
namespace {

std::atomic<int64_t> g_live_statuses{0};

// Set while a thread runs a piece of a parallel_for, so that nested calls run inline
// instead of multiplying threads (the ABI only promises that nesting works).
thread_local int t_parallel_depth = 0;

// host_alloc stores the size in a header before the aligned block, so that host_free
// (which gets only the pointer) can release it with the matching alignment.
struct AllocHeader {
  void* base;
};

}  // namespace

StatusInfo take_status(infer_status* status) {
  StatusInfo info;
  if (status == nullptr) return info;
  info.code = status->code;
  info.message = status->message;
  delete status;
  g_live_statuses.fetch_sub(1);
  return info;
}

const char* status_code_name(infer_status_code code) {
  switch (code) {
    case INFER_STATUS_OK:
      return "OK";
    case INFER_STATUS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case INFER_STATUS_UNSUPPORTED:
      return "UNSUPPORTED";
    case INFER_STATUS_UNAVAILABLE:
      return "UNAVAILABLE";
    case INFER_STATUS_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case INFER_STATUS_CANCELLED:
      return "CANCELLED";
    case INFER_STATUS_TIMEOUT:
      return "TIMEOUT";
    case INFER_STATUS_INTERNAL:
      return "INTERNAL";
    case INFER_STATUS_CODE_MAX_ENUM:  // never a value (plugin_api.h)
      break;
  }
  return "UNKNOWN";
}

TestHost::TestHost(size_t threads) : threads_(threads == 0 ? 1 : threads) {
  services_.struct_size = sizeof(infer_host_services);
  services_.abi_major = INFER_ABI_VERSION_MAJOR;
  services_.abi_minor = INFER_ABI_VERSION_MINOR;
  services_.host_ctx = this;
  services_.log = &TestHost::log_cb;
  services_.status_create = &TestHost::status_create_cb;
  services_.status_free = &TestHost::status_free_cb;
  services_.status_code = &TestHost::status_code_cb;
  services_.status_message = &TestHost::status_message_cb;
  services_.num_threads = &TestHost::num_threads_cb;
  services_.parallel_for = &TestHost::parallel_for_cb;
  services_.task_group_create = &TestHost::task_group_create_cb;
  services_.task_group_run = &TestHost::task_group_run_cb;
  services_.task_group_wait = &TestHost::task_group_wait_cb;
  services_.task_group_destroy = &TestHost::task_group_destroy_cb;
  services_.host_alloc = &TestHost::host_alloc_cb;
  services_.host_free = &TestHost::host_free_cb;
  services_.get_option = &TestHost::get_option_cb;
  services_.is_cancelled = &TestHost::is_cancelled_cb;
}

TestHost::~TestHost() = default;

void TestHost::set_option(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  options_[key] = value;
}

std::vector<LogEntry> TestHost::logs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return logs_;
}

void TestHost::clear_logs() {
  std::lock_guard<std::mutex> lock(mu_);
  logs_.clear();
}

int64_t TestHost::live_statuses() { return g_live_statuses.load(); }

void TestHost::log_cb(void* ctx, infer_log_level level, const char* message) {
  auto* self = static_cast<TestHost*>(ctx);
  std::lock_guard<std::mutex> lock(self->mu_);
  self->logs_.push_back({level, message ? message : ""});
}

infer_status* TestHost::status_create_cb(void*, infer_status_code code, const char* message) {
  g_live_statuses.fetch_add(1);
  return new infer_status{code, message ? message : ""};
}

void TestHost::status_free_cb(infer_status* status) {
  if (status == nullptr) return;
  g_live_statuses.fetch_sub(1);
  delete status;
}

infer_status_code TestHost::status_code_cb(const infer_status* status) {
  return status ? status->code : INFER_STATUS_OK;
}

const char* TestHost::status_message_cb(const infer_status* status) {
  return status ? status->message.c_str() : "";
}

size_t TestHost::num_threads_cb(void* ctx) { return static_cast<TestHost*>(ctx)->threads_; }

void TestHost::parallel_for_cb(void* ctx, size_t begin, size_t end, size_t grain, infer_range_fn fn,
                               void* user) {
  auto* self = static_cast<TestHost*>(ctx);
  if (end <= begin) return;
  if (grain == 0) grain = 1;
  const size_t n = end - begin;
  size_t pieces = std::min(self->threads_, (n + grain - 1) / grain);
  if (pieces <= 1 || t_parallel_depth > 0) {
    // One piece, or nested inside another parallel_for: run inline, still honouring the
    // grain so that the plugin sees the same kind of sub-ranges.
    ++t_parallel_depth;
    size_t step = std::max(grain, n);
    for (size_t b = begin; b < end; b += step) fn(user, b, std::min(end, b + step));
    --t_parallel_depth;
    return;
  }
  size_t chunk = std::max(grain, (n + pieces - 1) / pieces);
  pieces = (n + chunk - 1) / chunk;
  self->parallel_split_.fetch_add(pieces > 1 ? 1 : 0);
  std::vector<std::thread> workers;
  workers.reserve(pieces - 1);
  for (size_t p = 1; p < pieces; ++p) {
    size_t b = begin + p * chunk;
    size_t e = std::min(end, b + chunk);
    workers.emplace_back([fn, user, b, e] {
      ++t_parallel_depth;
      fn(user, b, e);
      --t_parallel_depth;
    });
  }
  ++t_parallel_depth;
  fn(user, begin, std::min(end, begin + chunk));
  --t_parallel_depth;
  for (auto& w : workers) w.join();
}

infer_task_group* TestHost::task_group_create_cb(void*) { return new infer_task_group(); }

void TestHost::task_group_run_cb(infer_task_group* group, infer_task_fn fn, void* user) {
  std::lock_guard<std::mutex> lock(group->mu);
  group->threads.emplace_back([fn, user] { fn(user); });
}

void TestHost::task_group_wait_cb(infer_task_group* group) {
  // Tasks may add more tasks while we wait, so join until the list stays empty.
  for (;;) {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(group->mu);
      threads.swap(group->threads);
    }
    if (threads.empty()) return;
    for (auto& t : threads) t.join();
  }
}

void TestHost::task_group_destroy_cb(infer_task_group* group) {
  if (group == nullptr) return;
  task_group_wait_cb(group);
  delete group;
}

void* TestHost::host_alloc_cb(void* ctx, size_t size, size_t alignment) {
  auto* self = static_cast<TestHost*>(ctx);
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  // Over-allocate and place a header just before the aligned block.
  size_t total = size + alignment + sizeof(AllocHeader);
  void* base = std::malloc(total);
  if (base == nullptr) return nullptr;
  auto addr = reinterpret_cast<uintptr_t>(base) + sizeof(AllocHeader);
  addr = (addr + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
  reinterpret_cast<AllocHeader*>(addr)[-1].base = base;
  self->live_allocations_.fetch_add(1);
  return reinterpret_cast<void*>(addr);
}

void TestHost::host_free_cb(void* ctx, void* ptr) {
  if (ptr == nullptr) return;
  auto* self = static_cast<TestHost*>(ctx);
  self->live_allocations_.fetch_sub(1);
  std::free(static_cast<AllocHeader*>(ptr)[-1].base);
}

int64_t TestHost::get_option_cb(void* ctx, const char* key, char* buf, size_t buf_size) {
  auto* self = static_cast<TestHost*>(ctx);
  std::lock_guard<std::mutex> lock(self->mu_);
  auto it = self->options_.find(key ? key : "");
  if (it == self->options_.end()) return -1;
  const std::string& v = it->second;
  if (buf != nullptr && buf_size > 0) {
    size_t n = std::min(v.size(), buf_size - 1);
    std::memcpy(buf, v.data(), n);
    buf[n] = '\0';
  }
  return static_cast<int64_t>(v.size());
}

bool TestHost::is_cancelled_cb(void* ctx, const infer_run_context*) {
  return static_cast<TestHost*>(ctx)->cancelled_.load();
}

}  // namespace infer::test
