// Warm-up C of the contest (spec sprout-and-contest.md section 6): a window
// steered by the RTT of each ACK. Our constants:
//  - RTT < kLowRttMs: W += 1/W (one datagram per RTT);
//  - RTT > kHighRttMs: W = max(1, W - kShrinkPerAck), which over a window of W
//    ACKs removes W/2: about a halving per RTT while the queue stays long;
//  - in between: hold. The contest link has 40 ms of fixed RTT, so the band
//    keeps 10 to 60 ms of queue. Timeouts only send (no window change).
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
  unsigned int timeout_ms() override { return kTimeoutMs; }
  std::map<std::string, double> parameters() const override;

 private:
  double initial_window_;
  double window_;
};

}  // namespace netrepro::grump
