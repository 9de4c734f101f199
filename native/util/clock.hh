// Monotonic time for schedules, wall time for logs.
#pragma once

#include <cstdint>

namespace netrepro {

// Microseconds on CLOCK_MONOTONIC.
uint64_t monotonic_us();
// Milliseconds on CLOCK_MONOTONIC.
uint64_t monotonic_ms();
// Milliseconds since the Unix epoch (CLOCK_REALTIME), for log headers.
uint64_t epoch_ms();
// Microseconds since the Unix epoch (CLOCK_REALTIME, the clock of SO_TIMESTAMPNS).
uint64_t epoch_us();
// Sleeps until the given CLOCK_MONOTONIC time in microseconds (absolute).
void sleep_until_us(uint64_t deadline_us);

}  // namespace netrepro
