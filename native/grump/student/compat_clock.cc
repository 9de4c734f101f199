#include "compat_clock.hh"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>

#include "timestamp.hh"

namespace netrepro::grump::student {

uint64_t unix_ms(const struct timespec& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

uint64_t unix_now_ms() {
  timespec ts{};
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
    throw std::runtime_error(std::string("clock_gettime: ") + std::strerror(errno));
  }
  return unix_ms(ts);
}

uint64_t epoch_unix_ms() {
  static const uint64_t epoch = kApi == 1 ? kDatagrumpEpochMs : unix_now_ms();
  return epoch;
}

uint64_t to_api_ms(uint64_t unix) {
  const uint64_t epoch = epoch_unix_ms();
  return unix >= epoch ? unix - epoch : 0;
}

}  // namespace netrepro::grump::student

namespace student = netrepro::grump::student;

uint64_t Network::timestamp(void) { return student::to_api_ms(student::unix_now_ms()); }
uint64_t Network::timestamp(const struct timespec& ts) {
  return student::to_api_ms(student::unix_ms(ts));
}
uint64_t timestamp_ms() { return student::to_api_ms(student::unix_now_ms()); }
uint64_t timestamp_ms(const timespec& ts) { return student::to_api_ms(student::unix_ms(ts)); }
