#include "sender_window.hh"

#include <algorithm>

#include "sprout_constants.hh"

namespace netrepro::sprout {

namespace {
constexpr int64_t kPacketBytes = static_cast<int64_t>(kMaxPayloadBytes);
}

void SenderWindow::on_forecast(const Forecast& forecast, uint64_t now_ms, uint64_t next_seq) {
  has_forecast_ = true;
  forecast_ = forecast;
  forecast_arrival_ms_ = now_ms;
  tau_ = 0;
  queue_bytes_ = next_seq >= forecast.received_or_lost
                     ? static_cast<int64_t>(next_seq - forecast.received_or_lost)
                     : 0;
  age(now_ms);
}

void SenderWindow::on_send(uint64_t payload_bytes, uint64_t now_ms) {
  queue_bytes_ += static_cast<int64_t>(payload_bytes);
  age(now_ms);
}

void SenderWindow::age(uint64_t now_ms) {
  if (!has_forecast_) {
    return;
  }
  const uint64_t elapsed = now_ms > forecast_arrival_ms_ ? now_ms - forecast_arrival_ms_ : 0;
  const int target = static_cast<int>(std::min<uint64_t>(elapsed / kTickMs, kHorizons - 1));
  while (tau_ < target) {
    // Quirk kept from the reference: it drains by the *cumulative* count
    // counts[tau] (packets in ticks 0..tau), not the per-tick increment
    // counts[tau] - counts[tau - 1]. With a forecast every tick tau rarely
    // passes 1 and it hardly matters; when forecasts are sparse the queue
    // estimate drains faster than forecast.
    queue_bytes_ = std::max<int64_t>(0, queue_bytes_ - kPacketBytes * forecast_.counts[tau_]);
    ++tau_;
  }
}

int64_t SenderWindow::window(uint64_t now_ms) {
  if (!has_forecast_) {
    return 0;
  }
  age(now_ms);
  const int end = std::min(tau_ + kTargetDelayTicks, kHorizons - 1);
  const int64_t deliverable =
      kPacketBytes * (static_cast<int64_t>(forecast_.counts[end]) -
                      static_cast<int64_t>(forecast_.counts[tau_]));
  return std::max<int64_t>(deliverable - queue_bytes_, 0);
}

}  // namespace netrepro::sprout
