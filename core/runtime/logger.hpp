// The session's log: filters by SessionOptions::log_level and sends lines to the
// application's sink, or to stderr when it gave none.
#pragma once

#include <string>

#include "infer/infer.hpp"

namespace infer::runtime {

class Logger {
 public:
  Logger(LogSink sink, LogLevel min_level) : sink_(std::move(sink)), min_(min_level) {}
  void log(LogLevel level, const std::string& message) const;
  // A sink that applies this logger's filter, for the plugin host.
  LogSink as_sink() const;

 private:
  LogSink sink_;
  LogLevel min_;
};

}  // namespace infer::runtime
