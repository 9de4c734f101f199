// The receiver's tick loop (reference receiver.cc advance_to/recv): turns
// datagram arrivals into per-tick observations for an estimator, honours the
// sender's quiet-time hints, and produces a forecast per tick.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "delivery_estimator.hh"
#include "forecast.hh"
#include "loss_tracker.hh"

namespace netrepro::sprout {

class TickReceiver {
 public:
  explicit TickReceiver(std::unique_ptr<DeliveryEstimator> estimator);

  // Processes every tick that ended before `now_ms`. No-op before the first datagram.
  void advance(uint64_t now_ms);

  // One datagram (data or heartbeat) arrived at `now_ms`.
  void on_datagram(uint64_t now_ms, uint64_t seq, uint16_t throwaway_window,
                   uint16_t time_to_next_ms, uint64_t payload_bytes);

  // The forecast for the current tick (call advance() first).
  Forecast forecast();

  bool started() const { return started_; }
  uint64_t tick_start_ms() const { return tick_start_; }
  uint64_t quiet_until_ms() const { return quiet_until_; }
  double pending_count() const { return count_; }
  uint64_t observed_ticks() const { return observed_ticks_; }
  uint64_t skipped_ticks() const { return skipped_ticks_; }
  const DeliveryEstimator& estimator() const { return *estimator_; }

  // round(c), except that any arrival at all (0 < c < 1) counts as one.
  static int discrete_count(double c);
  // Every datagram counts its payload plus the 2-byte length prefix that
  // every datagram of the reference carried, so a tick with only an empty
  // heartbeat is observed as k = 1 ("the link delivered something"), as in
  // the reference. Without it a link that comes back from an outage would
  // show the model nothing but k = 0 until the sender dared to send data.
  static constexpr double kFramingBytes = 2.0;

 private:
  std::unique_ptr<DeliveryEstimator> estimator_;
  LossTracker losses_;
  bool started_ = false;
  uint64_t tick_start_ = 0;
  uint64_t quiet_until_ = std::numeric_limits<uint64_t>::max();
  double count_ = 0.0;
  uint64_t observed_ticks_ = 0;
  uint64_t skipped_ticks_ = 0;
};

}  // namespace netrepro::sprout
