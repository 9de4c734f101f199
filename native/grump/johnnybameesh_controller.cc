#include "johnnybameesh_controller.hh"

#include <algorithm>
#include <cmath>

namespace netrepro::grump {

JohnnybAmeeshController::JohnnybAmeeshController(const ControllerOptions& options)
    : target_delay_ms_(options.get("target_delay_ms", kEstimatedRttMs)) {}

unsigned int JohnnybAmeeshController::window_size() {
  return static_cast<unsigned int>(std::floor(throughput_ * target_delay_ms_));
}

void JohnnybAmeeshController::ack_received(uint64_t sequence_number_acked,
                                           uint64_t send_timestamp_acked,
                                           uint64_t recv_timestamp_acked,
                                           uint64_t timestamp_ack_received) {
  const uint64_t elapsed = timestamp_ack_received - update_time_ms_;
  if (elapsed < kUpdateIntervalMs) {
    return;
  }
  double lower_bound = 0.0;
  if (recv_timestamp_acked >= send_timestamp_acked) {
    const uint64_t delay = std::max<uint64_t>(recv_timestamp_acked - send_timestamp_acked, 1);
    lower_bound = 1.0 / static_cast<double>(delay);
  }
  // Signed, as in the original: a reordered ACK gives a negative count.
  const double acked = static_cast<double>(static_cast<int64_t>(sequence_number_acked) -
                                           static_cast<int64_t>(last_sequence_number_));
  throughput_ = std::max(lower_bound, kOldWeight * throughput_ +
                                          kNewWeight * acked / static_cast<double>(elapsed));
  update_time_ms_ = timestamp_ack_received;
  last_sequence_number_ = sequence_number_acked;
}

std::map<std::string, double> JohnnybAmeeshController::parameters() const {
  return {{"update_interval_ms", static_cast<double>(kUpdateIntervalMs)},
          {"target_delay_ms", target_delay_ms_},
          {"old_weight", kOldWeight},
          {"new_weight", kNewWeight},
          {"timeout_ms", kTimeoutMs}};
}

}  // namespace netrepro::grump
