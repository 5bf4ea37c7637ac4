#include "partitioner/units.hpp"

#include <cstdio>

namespace infer::partitioner {

std::string format_bytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 3) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

std::string format_time_us(double us) {
  char text[48];
  if (us < 1000.0)
    std::snprintf(text, sizeof text, "%.1f us", us);
  else
    std::snprintf(text, sizeof text, "%.2f ms", us / 1000.0);
  return text;
}

}  // namespace infer::partitioner
