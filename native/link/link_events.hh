// What a trace queue reports, in mahimahi's log vocabulary. Times are microseconds.
#pragma once

#include <cstdint>

namespace netrepro {

class LinkEvents {
 public:
  virtual ~LinkEvents() = default;
  virtual void arrival(uint64_t time_us, uint32_t size) = 0;
  virtual void drop(uint64_t time_us, uint32_t packets, uint64_t bytes) = 0;
  virtual void opportunity(uint64_t time_us, uint32_t bytes) = 0;
  // queueing_delay_ms is departure ms minus arrival ms, as mahimahi logs it.
  virtual void departure(uint64_t time_us, uint32_t size, uint64_t queueing_delay_ms) = 0;
};

}  // namespace netrepro
