#include "throwaway_tracker.hh"

#include <algorithm>

#include "sprout_constants.hh"

namespace netrepro::sprout {

uint16_t ThrowawayTracker::add(uint64_t seq, uint64_t now_ms) {
  sent_.emplace_back(seq, now_ms);
  // Keep the packets sent in the last 10 ms (the new one always stays).
  while (sent_.front().second + kReorderLimitMs < now_ms) {
    sent_.pop_front();
  }
  const uint64_t window = seq - sent_.front().first;
  return static_cast<uint16_t>(std::min<uint64_t>(window, 65535));
}

}  // namespace netrepro::sprout
