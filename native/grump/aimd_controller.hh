// Warm-up B of the contest (spec sprout-and-contest.md section 6): additive
// increase of one datagram per RTT (1/W per ACK), multiplicative decrease on a
// congestion signal. Our constants (the contest left them to the student):
//  - signal = an idle timeout (a datagram sent with after_timeout), or an ACK
//    whose RTT exceeds kRttThresholdMs. The contest link has 40 ms of fixed
//    round-trip delay, so 100 ms means about 60 ms of queue.
//  - on a signal W = max(1, W * kDecrease).
//  - RTT signals count once per window, as in TCP: after a decrease, ACKs of
//    datagrams sent before it neither decrease nor increase W again. Every
//    timeout halves (like TCP's back-off during an outage).
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class AimdController : public Controller {
 public:
  static constexpr unsigned int kDefaultInitialWindow = 10;
  static constexpr double kDecrease = 0.5;
  static constexpr uint64_t kRttThresholdMs = 100;
  static constexpr unsigned int kTimeoutMs = 200;
  static constexpr double kMinWindow = 1.0;

  explicit AimdController(const ControllerOptions& options);

  unsigned int window_size() override;
  void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp,
                         bool after_timeout) override;
  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override;
  unsigned int timeout_ms() override { return kTimeoutMs; }
  std::map<std::string, double> parameters() const override;

 private:
  void decrease();

  double initial_window_;
  double window_;
  uint64_t next_sequence_number_ = 0;  // one past the last datagram sent
  uint64_t recovery_until_ = 0;        // ACKs below this belong to the window already cut
};

}  // namespace netrepro::grump
