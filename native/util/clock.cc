#include "clock.hh"

#include <cerrno>
#include <ctime>

#include "system_error.hh"

namespace netrepro {

namespace {
uint64_t read_us(clockid_t clock) {
  timespec ts{};
  check_syscall("clock_gettime", ::clock_gettime(clock, &ts));
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}
}  // namespace

uint64_t monotonic_us() { return read_us(CLOCK_MONOTONIC); }
uint64_t monotonic_ms() { return monotonic_us() / 1000u; }
uint64_t epoch_ms() { return read_us(CLOCK_REALTIME) / 1000u; }
uint64_t epoch_us() { return read_us(CLOCK_REALTIME); }

void sleep_until_us(uint64_t deadline_us) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(deadline_us / 1000000u);
  ts.tv_nsec = static_cast<long>((deadline_us % 1000000u) * 1000u);
  int rc;
  do {
    rc = ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
  } while (rc == EINTR);
  if (rc != 0) {
    throw SystemError("clock_nanosleep", rc);
  }
}

}  // namespace netrepro
