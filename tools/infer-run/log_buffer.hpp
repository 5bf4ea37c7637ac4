// Holds the runtime's and plugins' log messages until infer-run knows how the step that
// produced them ended. On success they are printed; on failure they are dropped (unless
// --verbose), so an error is reported as exactly one line on stderr and a warning that
// led to it is not printed as a second, confusing line.
#pragma once

#include <mutex>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "infer/infer.hpp"

namespace infer::cli {

class LogBuffer {
 public:
  explicit LogBuffer(LogLevel min_level) : min_level_(min_level) {}

  // A sink for SessionOptions::log_sink. It may be called from any thread; the buffer
  // must outlive every session it was given to.
  LogSink sink();

  // Prints the held messages as "infer-run: <level>: <message>" lines and forgets them.
  void flush(std::ostream& err);
  // Forgets the held messages.
  void clear();

 private:
  LogLevel min_level_;
  std::mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> messages_;
};

}  // namespace infer::cli
