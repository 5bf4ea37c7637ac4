// A test implementation of the host services a plugin receives (infer_host_services).
// It behaves like the real host where tests care: statuses carry a code and a copied
// message, log lines are captured, parallel_for really splits its range over several
// std::threads (so kernels are exercised concurrently), task groups run on threads,
// host_alloc honours alignment and counts live allocations, options come from a map and
// cancellation is a flag.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "infer/plugin_api.h"

namespace infer::test {

// A status taken over from a plugin: code and message, with the C object freed.
struct StatusInfo {
  infer_status_code code = INFER_STATUS_OK;
  std::string message;
  bool ok() const { return code == INFER_STATUS_OK; }
};

// Takes ownership of `status` (which must come from a TestHost's status_create, as all
// statuses a plugin returns do), frees it and returns its code and message. NULL is OK.
StatusInfo take_status(infer_status* status);

// Readable code name: "OK", "INVALID_ARGUMENT", "UNSUPPORTED"...
const char* status_code_name(infer_status_code code);

struct LogEntry {
  infer_log_level level;
  std::string message;
};

class TestHost {
 public:
  // `threads` is what num_threads reports and how many pieces parallel_for makes at most.
  explicit TestHost(size_t threads = 4);
  ~TestHost();
  TestHost(const TestHost&) = delete;
  TestHost& operator=(const TestHost&) = delete;

  // The services table to hand to plugin_create; valid for the TestHost's lifetime.
  const infer_host_services* services() const { return &services_; }

  // Options returned by get_option.
  void set_option(const std::string& key, const std::string& value);
  // Value that is_cancelled returns (for every run context).
  void set_cancelled(bool cancelled) { cancelled_.store(cancelled); }

  std::vector<LogEntry> logs() const;
  void clear_logs();

  // Bookkeeping that lets tests check a plugin frees what it allocates.
  int64_t live_allocations() const { return live_allocations_.load(); }
  static int64_t live_statuses();
  // How many parallel_for calls ran with more than one piece (proves real concurrency).
  int64_t parallel_calls_split() const { return parallel_split_.load(); }

 private:
  static void log_cb(void* ctx, infer_log_level level, const char* message);
  static infer_status* status_create_cb(void* ctx, infer_status_code code, const char* message);
  static void status_free_cb(infer_status* status);
  static infer_status_code status_code_cb(const infer_status* status);
  static const char* status_message_cb(const infer_status* status);
  static size_t num_threads_cb(void* ctx);
  static void parallel_for_cb(void* ctx, size_t begin, size_t end, size_t grain, infer_range_fn fn,
                              void* user);
  static infer_task_group* task_group_create_cb(void* ctx);
  static void task_group_run_cb(infer_task_group* group, infer_task_fn fn, void* user);
  static void task_group_wait_cb(infer_task_group* group);
  static void task_group_destroy_cb(infer_task_group* group);
  static void* host_alloc_cb(void* ctx, size_t size, size_t alignment);
  static void host_free_cb(void* ctx, void* ptr);
  static int64_t get_option_cb(void* ctx, const char* key, char* buf, size_t buf_size);
  static bool is_cancelled_cb(void* ctx, const infer_run_context* run);

  infer_host_services services_{};
  size_t threads_;
  mutable std::mutex mu_;
  std::vector<LogEntry> logs_;
  std::map<std::string, std::string> options_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> live_allocations_{0};
  std::atomic<int64_t> parallel_split_{0};
};

}  // namespace infer::test
