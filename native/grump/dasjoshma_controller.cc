#include "dasjoshma_controller.hh"

#include <algorithm>
#include <cmath>

namespace netrepro::grump {

DasJoshmaController::DasJoshmaController(const ControllerOptions& options)
    : target_delay_ms_(options.get("target_delay_ms", kSafeDelayMs)) {}

void DasJoshmaController::update_estimate(uint64_t now_ms, uint64_t delay_ms) {
  if (now_ms - last_tick_ms_ < kTickMs) {
    return;
  }
  const double lower_bound = delay_ms > 0 ? 1.0 / static_cast<double>(delay_ms) : 0.0;
  const double recent =
      std::max(static_cast<double>(acks_this_tick_) / static_cast<double>(kTickMs), lower_bound);
  throughput_ = std::max((1 - kEwmaGain) * throughput_ + kEwmaGain * recent, lower_bound);
  if (recent > throughput_) {
    ++ticks_higher_;
    ticks_lower_ = 0;
  } else {
    ++ticks_lower_;
    ticks_higher_ = 0;
  }
  acks_this_tick_ = 0;
  last_tick_ms_ = now_ms - now_ms % kTickMs;
}

unsigned int DasJoshmaController::window_size() {
  const double scale = 1.0 + kScaleStep * (ticks_higher_ - ticks_lower_);
  // A long run of low ticks makes the scale negative; the original then cast a
  // negative double to unsigned (undefined). A closed window is what it meant.
  return static_cast<unsigned int>(std::max(0.0, std::floor(throughput_ * scale * target_delay_ms_)));
}

void DasJoshmaController::datagram_was_sent(uint64_t, uint64_t send_timestamp, bool) {
  update_estimate(send_timestamp, 0);
}

void DasJoshmaController::ack_received(uint64_t, uint64_t send_timestamp_acked,
                                       uint64_t recv_timestamp_acked,
                                       uint64_t timestamp_ack_received) {
  const uint64_t rtt = timestamp_ack_received - send_timestamp_acked;
  const uint64_t one_way = recv_timestamp_acked > send_timestamp_acked
                               ? recv_timestamp_acked - send_timestamp_acked
                               : UINT64_MAX;
  update_estimate(timestamp_ack_received, std::min(one_way, rtt));
  ++acks_this_tick_;  // after the update: this ACK belongs to the new tick
}

std::map<std::string, double> DasJoshmaController::parameters() const {
  return {{"tick_ms", static_cast<double>(kTickMs)},
          {"ewma_gain", kEwmaGain},
          {"target_delay_ms", target_delay_ms_},
          {"scale_step", kScaleStep},
          {"timeout_ms", kTimeoutMs}};
}

}  // namespace netrepro::grump
