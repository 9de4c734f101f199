#include "sheen_controller.hh"

#include <algorithm>

namespace netrepro::grump {

SheenController::SheenController(const ControllerOptions& options)
    : delay_event_rtt_ms_(
          static_cast<uint64_t>(options.get("rtt_threshold_ms", kDelayEventRttMs))) {}

void SheenController::on_delay_event() {
  if (delay_events_ < kDelayEventsIgnored) {
    ++delay_events_;
    return;
  }
  delay_events_ = 0;
  ssthresh_ = window_ / 2;
  window_ = ssthresh_ + 3;
}

void SheenController::ack_received(uint64_t, uint64_t send_timestamp_acked, uint64_t,
                                   uint64_t timestamp_ack_received) {
  const uint64_t rtt = timestamp_ack_received - send_timestamp_acked;
  const bool delay_event = rtt >= delay_event_rtt_ms_;
  if (state_ == State::kCongestionAvoidance) {
    if (delay_event) {
      on_delay_event();
      state_ = State::kFastRecovery;
    } else {
      window_ += 1 / window_;
    }
  } else if (delay_event) {
    on_delay_event();
  } else if (window_ > ssthresh_) {
    state_ = State::kCongestionAvoidance;
    window_ += 1 / window_;
  } else {
    window_ += state_ == State::kFastRecovery ? 2 : 1;
  }
  window_ = std::max(window_, kMinWindow);
}

std::map<std::string, double> SheenController::parameters() const {
  return {{"initial_window", kInitialWindow},
          {"initial_ssthresh", kInitialSsthresh},
          {"rtt_threshold_ms", static_cast<double>(delay_event_rtt_ms_)},
          {"delay_events_ignored", kDelayEventsIgnored},
          {"min_window", kMinWindow},
          {"timeout_ms", kTimeoutMs}};
}

}  // namespace netrepro::grump
