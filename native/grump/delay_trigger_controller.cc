#include "delay_trigger_controller.hh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace netrepro::grump {

DelayTriggerController::DelayTriggerController(const ControllerOptions& options)
    : initial_window_(std::max(options.get("window", kDefaultInitialWindow), kMinWindow)),
      low_rtt_ms_(static_cast<uint64_t>(options.get("low_rtt_ms", kLowRttMs))),
      high_rtt_ms_(static_cast<uint64_t>(options.get("high_rtt_ms", kHighRttMs))),
      shrink_per_ack_(options.get("shrink_per_ack", kShrinkPerAck)),
      timeout_ms_(static_cast<unsigned int>(options.get("timeout_ms", kTimeoutMs))),
      window_(initial_window_) {
  if (low_rtt_ms_ > high_rtt_ms_) {
    throw std::invalid_argument("controller 'delay-trigger': low_rtt_ms " +
                                std::to_string(low_rtt_ms_) + " is above high_rtt_ms " +
                                std::to_string(high_rtt_ms_));
  }
}

void DelayTriggerController::ack_received(uint64_t, uint64_t send_timestamp_acked, uint64_t,
                                          uint64_t timestamp_ack_received) {
  const uint64_t rtt = timestamp_ack_received - send_timestamp_acked;
  if (rtt < low_rtt_ms_) {
    window_ += 1.0 / window_;
  } else if (rtt > high_rtt_ms_) {
    window_ = std::max(kMinWindow, window_ - shrink_per_ack_);
  }
}

std::map<std::string, double> DelayTriggerController::parameters() const {
  return {{"window", initial_window_},
          {"low_rtt_ms", static_cast<double>(low_rtt_ms_)},
          {"high_rtt_ms", static_cast<double>(high_rtt_ms_)},
          {"shrink_per_ack", shrink_per_ack_},
          {"timeout_ms", timeout_ms_},
          {"min_window", kMinWindow}};
}

}  // namespace netrepro::grump
