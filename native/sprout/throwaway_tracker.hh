// Sender-side half of the loss bookkeeping (reference network.cc SendQueue):
// each packet carries how far back in sequence space the oldest packet sent
// in the last 10 ms is; older packets that have not arrived count as lost.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace netrepro::sprout {

class ThrowawayTracker {
 public:
  // Registers a packet at `seq` sent at `now_ms`; returns its throwaway
  // window in bytes (capped at 65535 to fit the wire field).
  uint16_t add(uint64_t seq, uint64_t now_ms);

 private:
  std::deque<std::pair<uint64_t, uint64_t>> sent_;  // seq, send time (ms)
};

}  // namespace netrepro::sprout
