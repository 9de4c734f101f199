#include "sheen_controller.hh"

#include <algorithm>

namespace netrepro::grump {

SheenController::SheenController(const ControllerOptions& options) {
  options.reject_window("sheen");
}

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
  const bool delay_event = rtt >= kDelayEventRttMs;
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
          {"delay_event_rtt_ms", static_cast<double>(kDelayEventRttMs)},
          {"delay_events_ignored", kDelayEventsIgnored},
          {"min_window", kMinWindow},
          {"timeout_ms", kTimeoutMs}};
}

}  // namespace netrepro::grump
