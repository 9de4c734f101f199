// The CS244 (2017) contest controller "sheen", written from the description in
// the spec (sprout-and-contest.md section 6; source read for facts:
// lanhamt/sheen 83cd54f, datagrump/controller.cc lines 24-148).
//
// A TCP-like window in datagrams, W = 13 and ssthresh = 500 at start, driven by
// a "delay event": an ACK whose RTT is >= 90 ms. A delay event bumps a counter;
// only when the counter is already at 8 (so on the 9th event, then every 9th;
// the spec's "every 8th" rounds this) is it reset with ssthresh = W/2,
// W = ssthresh + 3. Per ACK without a delay event:
//   slow start:      W += 1, or enter congestion avoidance (W += 1/W) once W > ssthresh
//   fast recovery:   W += 2, or the same switch to congestion avoidance
//   cong. avoidance: W += 1/W
// A delay event in congestion avoidance always moves to fast recovery (whether
// or not the counter fired). The counter never resets on good ACKs. W >= 2.
// Poll timeout 90 ms; timeouts only send. W is a double (the original: float).
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class SheenController : public Controller {
 public:
  enum class State { kSlowStart, kCongestionAvoidance, kFastRecovery };

  static constexpr double kInitialWindow = 13.0;
  static constexpr double kInitialSsthresh = 500.0;
  static constexpr uint64_t kDelayEventRttMs = 90;
  static constexpr int kDelayEventsIgnored = 8;
  static constexpr double kMinWindow = 2.0;
  static constexpr unsigned int kTimeoutMs = 90;

  explicit SheenController(const ControllerOptions& options);

  unsigned int window_size() override { return static_cast<unsigned int>(window_); }
  void datagram_was_sent(uint64_t, uint64_t, bool) override {}
  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override;
  unsigned int timeout_ms() override { return kTimeoutMs; }
  std::map<std::string, double> parameters() const override;

  State state() const { return state_; }
  double ssthresh() const { return ssthresh_; }

 private:
  void on_delay_event();

  uint64_t delay_event_rtt_ms_;  // kDelayEventRttMs unless given
  double window_ = kInitialWindow;
  double ssthresh_ = kInitialSsthresh;
  int delay_events_ = 0;
  State state_ = State::kSlowStart;
};

}  // namespace netrepro::grump
