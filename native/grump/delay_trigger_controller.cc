#include "delay_trigger_controller.hh"

#include <algorithm>

namespace netrepro::grump {

DelayTriggerController::DelayTriggerController(const ControllerOptions& options)
    : initial_window_(std::max<double>(options.window_or(kDefaultInitialWindow), kMinWindow)),
      window_(initial_window_) {}

void DelayTriggerController::ack_received(uint64_t, uint64_t send_timestamp_acked, uint64_t,
                                          uint64_t timestamp_ack_received) {
  const uint64_t rtt = timestamp_ack_received - send_timestamp_acked;
  if (rtt < kLowRttMs) {
    window_ += 1.0 / window_;
  } else if (rtt > kHighRttMs) {
    window_ = std::max(kMinWindow, window_ - kShrinkPerAck);
  }
}

std::map<std::string, double> DelayTriggerController::parameters() const {
  return {{"initial_window", initial_window_},
          {"low_rtt_ms", static_cast<double>(kLowRttMs)},
          {"high_rtt_ms", static_cast<double>(kHighRttMs)},
          {"shrink_per_ack", kShrinkPerAck},
          {"timeout_ms", kTimeoutMs},
          {"min_window", kMinWindow}};
}

}  // namespace netrepro::grump
