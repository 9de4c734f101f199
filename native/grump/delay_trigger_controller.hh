// Warm-up C of the contest (spec sprout-and-contest.md section 6): a window
// steered by the RTT of each ACK. The parameters (controllers.tsv; the
// defaults below are the same numbers, for a controller built without the
// registry):
//  - RTT < low_rtt_ms: W += 1/W (one datagram per RTT);
//  - RTT > high_rtt_ms: W = max(1, W - shrink_per_ack), which with 0.5 removes
//    W/2 over a window of W ACKs: about a halving per RTT while the queue stays long;
//  - in between: hold. The contest link has 40 ms of fixed RTT, so the default
//    band keeps 10 to 60 ms of queue. Timeouts only send (no window change).
// low_rtt_ms above high_rtt_ms is refused.
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class DelayTriggerController : public Controller {
 public:
  static constexpr unsigned int kDefaultInitialWindow = 10;
  static constexpr uint64_t kLowRttMs = 50;
  static constexpr uint64_t kHighRttMs = 100;
  static constexpr double kShrinkPerAck = 0.5;
  static constexpr unsigned int kTimeoutMs = 200;
  static constexpr double kMinWindow = 1.0;

  explicit DelayTriggerController(const ControllerOptions& options);

  unsigned int window_size() override { return static_cast<unsigned int>(window_); }
  void datagram_was_sent(uint64_t, uint64_t, bool) override {}
  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override;
  unsigned int timeout_ms() override { return timeout_ms_; }
  std::map<std::string, double> parameters() const override;

 private:
  double initial_window_;
  uint64_t low_rtt_ms_;
  uint64_t high_rtt_ms_;
  double shrink_per_ack_;
  unsigned int timeout_ms_;
  double window_;
};

}  // namespace netrepro::grump
