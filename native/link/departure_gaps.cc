#include "departure_gaps.hh"

namespace netrepro {

void DepartureGapCounter::sent(uint64_t departure_us, uint64_t left_queue_us, uint32_t backlog,
                               uint32_t size, bool lost_since_previous) {
  // Only a packet that found its predecessor still queued left back to back with it, and
  // only a full-size one's ideal gap is one opportunity (as analysis/queue_log.py counts).
  if (have_previous_ && backlog >= 1 && size == kFullSize && !lost_since_previous &&
      departure_us >= previous_departure_us_) {
    const double scheduled = static_cast<double>(departure_us - previous_departure_us_);
    const double actual = static_cast<double>(left_queue_us) -
                          static_cast<double>(previous_left_us_);
    const double error = actual > scheduled ? actual - scheduled : scheduled - actual;
    ++gaps_;
    if (error <= kTolerance * scheduled) ++within_;
  }
  have_previous_ = true;
  previous_departure_us_ = departure_us;
  previous_left_us_ = left_queue_us;
}

}  // namespace netrepro
