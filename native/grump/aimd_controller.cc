#include "aimd_controller.hh"

#include <algorithm>

namespace netrepro::grump {

AimdController::AimdController(const ControllerOptions& options)
    : initial_window_(std::max(options.get("window", kDefaultInitialWindow), kMinWindow)),
      increase_(options.get("increase", kIncrease)),
      decrease_(options.get("decrease", kDecrease)),
      rtt_threshold_ms_(static_cast<uint64_t>(options.get("rtt_threshold_ms", kRttThresholdMs))),
      timeout_ms_(static_cast<unsigned int>(options.get("timeout_ms", kTimeoutMs))),
      window_(initial_window_) {}

unsigned int AimdController::window_size() { return static_cast<unsigned int>(window_); }

void AimdController::datagram_was_sent(uint64_t sequence_number, uint64_t, bool after_timeout) {
  next_sequence_number_ = std::max(next_sequence_number_, sequence_number + 1);
  if (after_timeout) {
    decrease();
  }
}

void AimdController::ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                                  uint64_t, uint64_t timestamp_ack_received) {
  if (sequence_number_acked < recovery_until_) {
    return;  // this window was already cut
  }
  const uint64_t rtt = timestamp_ack_received - send_timestamp_acked;
  if (rtt > rtt_threshold_ms_) {
    decrease();
  } else {
    window_ += increase_ / window_;
  }
}

void AimdController::decrease() {
  window_ = std::max(kMinWindow, window_ / decrease_);
  recovery_until_ = next_sequence_number_;
}

std::map<std::string, double> AimdController::parameters() const {
  return {{"window", initial_window_},
          {"increase", increase_},
          {"decrease", decrease_},
          {"rtt_threshold_ms", static_cast<double>(rtt_threshold_ms_)},
          {"timeout_ms", timeout_ms_},
          {"min_window", kMinWindow}};
}

}  // namespace netrepro::grump
