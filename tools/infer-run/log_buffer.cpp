#include "log_buffer.hpp"

namespace infer::cli {
namespace {

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "log";
}

}  // namespace

LogSink LogBuffer::sink() {
  return [this](LogLevel level, const std::string& message) {
    if (level < min_level_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    messages_.emplace_back(level, message);
  };
}

void LogBuffer::flush(std::ostream& err) {
  std::vector<std::pair<LogLevel, std::string>> messages;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    messages.swap(messages_);
  }
  for (const auto& [level, message] : messages) {
    // A runtime error logged on the way to a successful result is only a diagnostic
    // here; it must not read like infer-run's own failure line.
    err << "infer-run: " << (level == LogLevel::kError ? "log" : level_name(level)) << ": " << message << "\n";
  }
}

void LogBuffer::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  messages_.clear();
}

}  // namespace infer::cli
