// How sizes and times read in reasons and in --explain: short, with a unit, and the same
// everywhere ("48 B", "3.1 MiB", "20.0 us", "1.25 ms").
#pragma once

#include <cstdint>
#include <string>

namespace infer::partitioner {

// Binary units (KiB, MiB, GiB) with one decimal above 1 KiB; exact bytes below.
std::string format_bytes(int64_t bytes);

// Microseconds with one decimal below a millisecond, milliseconds with two above.
std::string format_time_us(double us);

}  // namespace infer::partitioner
