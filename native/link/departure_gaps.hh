// The Mininet-HiFi measure of a link's precision, kept by the emulator for every run: of the
// gaps between consecutive departures from a backlogged queue, the share within 10% of the gap
// the schedule asked for. analysis/queue_log.py computes the same from a queue log over a
// chosen window; this counts the whole run, with or without a queue log.
#pragma once

#include <cstdint>

namespace netrepro {

class DepartureGapCounter {
 public:
  static constexpr uint32_t kFullSize = 1504;  // a full-size frame on the IP + 4 basis
  static constexpr double kTolerance = 0.10;

  // One packet sent: its scheduled departure from the queue, when it really left the queue
  // (its send time less its fixed delay), how many packets it found waiting, its size, and
  // whether random loss took a packet since the one sent before it (that one's opportunity
  // then lies between the two, so their gap is no one's).
  void sent(uint64_t departure_us, uint64_t left_queue_us, uint32_t backlog, uint32_t size,
            bool lost_since_previous);
  // The packets' departures come in schedule order only with one delay for all; a delay per
  // far host reorders sends, and the counter then stops (its figures become unknown).
  void reordered() { valid_ = false; }

  bool known() const { return valid_ && gaps_ > 0; }
  uint64_t gaps() const { return gaps_; }
  uint64_t within() const { return within_; }
  double fraction() const { return gaps_ ? static_cast<double>(within_) / gaps_ : 0.0; }

 private:
  bool have_previous_ = false;
  bool valid_ = true;
  uint64_t previous_departure_us_ = 0;
  uint64_t previous_left_us_ = 0;
  uint64_t gaps_ = 0;
  uint64_t within_ = 0;
};

}  // namespace netrepro
