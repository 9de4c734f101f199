#include "loss_tracker.hh"

#include <algorithm>

namespace netrepro::sprout {

void LossTracker::record(uint64_t seq, uint16_t throwaway_window, uint64_t payload_bytes) {
  above_.emplace(seq, payload_bytes);
  above_bytes_ += payload_bytes;
  const uint64_t point = seq >= throwaway_window ? seq - throwaway_window : 0;
  throwaway_before_ = std::max(throwaway_before_, point);
}

uint64_t LossTracker::received_or_lost() {
  while (!above_.empty() && above_.top().first < throwaway_before_) {
    above_bytes_ -= above_.top().second;
    above_.pop();
  }
  return throwaway_before_ + above_bytes_;
}

}  // namespace netrepro::sprout
