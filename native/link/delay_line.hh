// A fixed delay stage: every packet is released `delay_us` after it entered, in FIFO order.
// Clock-free like TraceQueue: the caller passes times in microseconds.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>

#include "packet.hh"

namespace netrepro {

struct Release {
  Packet packet;
  uint64_t release_us = 0;  // scheduled release time
};

class DelayLine {
 public:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

  explicit DelayLine(uint64_t delay_us) : delay_us_(delay_us) {}

  // Holds the packet until entry_us + delay; entry times must never decrease.
  void push(Packet packet, uint64_t entry_us);
  // Release time of the oldest held packet, or kNever when empty.
  uint64_t next_release_us() const { return held_.empty() ? kNever : held_.front().release_us; }
  // Removes and returns the oldest packet; only call when not empty.
  Release pop();
  bool empty() const { return held_.empty(); }
  uint64_t size() const { return held_.size(); }
  uint64_t delay_us() const { return delay_us_; }

 private:
  uint64_t delay_us_;
  std::deque<Release> held_;
};

}  // namespace netrepro
