#include "tick_receiver.hh"

#include <algorithm>
#include <stdexcept>

#include "sprout_constants.hh"

namespace netrepro::sprout {

TickReceiver::TickReceiver(std::unique_ptr<DeliveryEstimator> estimator)
    : estimator_(std::move(estimator)) {
  if (!estimator_) {
    throw std::invalid_argument("TickReceiver: estimator is null");
  }
}

int TickReceiver::discrete_count(double c) {
  if (c > 0 && c < 1) {
    return 1;
  }
  return static_cast<int>(c + 0.5);
}

void TickReceiver::advance(uint64_t now_ms) {
  if (!started_) {
    return;
  }
  while (tick_start_ + kTickMs < now_ms) {
    estimator_->pass_tick();
    // An empty tick before the sender's announced quiet time ends means "the
    // sender had nothing to send", not "the link had no capacity": skip it.
    if (tick_start_ >= quiet_until_ || count_ > 0) {
      estimator_->observe_tick(count_, discrete_count(count_));
      count_ = 0;
      ++observed_ticks_;
    } else {
      ++skipped_ticks_;
    }
    tick_start_ += kTickMs;
  }
}

void TickReceiver::on_datagram(uint64_t now_ms, uint64_t seq, uint16_t throwaway_window,
                               uint16_t time_to_next_ms, uint64_t payload_bytes) {
  if (!started_) {
    started_ = true;
    tick_start_ = now_ms;
    quiet_until_ = now_ms;
  }
  advance(now_ms);
  count_ += (static_cast<double>(payload_bytes) + kFramingBytes) / kCountingPacketBytes;
  losses_.record(seq, throwaway_window, payload_bytes);
  quiet_until_ = std::max(quiet_until_, tick_start_ + time_to_next_ms);
}

Forecast TickReceiver::forecast() {
  Forecast f;
  f.received_or_lost = losses_.received_or_lost();
  f.tick_start_ms = tick_start_;
  f.counts = estimator_->forecast();
  return f;
}

}  // namespace netrepro::sprout
