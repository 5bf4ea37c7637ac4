#include "runtime/logger.hpp"

#include <cstdio>

namespace infer::runtime {
namespace {

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "log";
}

}  // namespace

void Logger::log(LogLevel level, const std::string& message) const {
  if (static_cast<int>(level) < static_cast<int>(min_)) return;
  if (sink_) {
    sink_(level, message);
    return;
  }
  std::fprintf(stderr, "infer: %s: %s\n", level_name(level), message.c_str());
}

LogSink Logger::as_sink() const {
  Logger copy = *this;
  return [copy](LogLevel level, const std::string& message) { copy.log(level, message); };
}

}  // namespace infer::runtime
