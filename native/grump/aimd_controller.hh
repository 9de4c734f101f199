// Warm-up B of the contest (spec sprout-and-contest.md section 6): additive
// increase of `increase` datagrams per RTT (increase/W per ACK), multiplicative
// decrease on a congestion signal. The parameters (controllers.tsv; the
// defaults below are the same numbers, for a controller built without the
// registry) and our choices where the contest left them to the student:
//  - signal = an idle timeout (a datagram sent with after_timeout, after
//    `timeout_ms`), or an ACK whose RTT exceeds `rtt_threshold_ms`. The contest
//    link has 40 ms of fixed round-trip delay, so 100 ms means about 60 ms of queue.
//  - on a signal W = max(1, W / decrease).
//  - RTT signals count once per window, as in TCP: after a decrease, ACKs of
//    datagrams sent before it neither decrease nor increase W again. Every
//    timeout decreases (like TCP's back-off during an outage).
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class AimdController : public Controller {
 public:
  static constexpr unsigned int kDefaultInitialWindow = 10;
  static constexpr double kIncrease = 1.0;
  static constexpr double kDecrease = 2.0;
  static constexpr uint64_t kRttThresholdMs = 100;
  static constexpr unsigned int kTimeoutMs = 200;
  static constexpr double kMinWindow = 1.0;

  explicit AimdController(const ControllerOptions& options);

  unsigned int window_size() override;
  void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp,
                         bool after_timeout) override;
  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override;
  unsigned int timeout_ms() override { return timeout_ms_; }
  std::map<std::string, double> parameters() const override;

 private:
  void decrease();

  double initial_window_;
  double increase_;
  double decrease_;
  uint64_t rtt_threshold_ms_;
  unsigned int timeout_ms_;
  double window_;
  uint64_t next_sequence_number_ = 0;  // one past the last datagram sent
  uint64_t recovery_until_ = 0;        // ACKs below this belong to the window already cut
};

}  // namespace netrepro::grump
