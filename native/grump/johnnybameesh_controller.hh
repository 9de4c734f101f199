// The 2013 MIT 6.829 contest entry of johnnyb & ameesh, written from the
// description in the spec (sprout-and-contest.md section 6; source read for
// facts: keithw/datagrump-students branch johnnyb-ameesh eba5558,
// controller.cc lines 26-86).
//
// On an ACK, once at least 20 ms have passed since the last update:
//   n   = acked sequence number - acked sequence number at the last update
//   thr = max(1/d, 0.70 thr + 0.35 n / elapsed)    datagrams per ms
// where d = recv_ts - send_ts of this ACK (one-way delay). window =
// floor(thr * 60) (60 ms worth of datagrams). The first ACK always updates
// (the last update is at time 0). Differences from the original, each only
// where it was undefined or degenerate: d = 0 ms is taken as 1 ms (the
// original divided by zero, an infinite window); a negative d (receiver clock
// behind) gives no lower bound (the original's unsigned wrap gave ~0); thr is a
// double (the original stored a float).
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class JohnnybAmeeshController : public Controller {
 public:
  static constexpr uint64_t kUpdateIntervalMs = 20;
  static constexpr double kEstimatedRttMs = 60;
  static constexpr double kOldWeight = 0.70;
  static constexpr double kNewWeight = 0.35;  // the weights sum to 1.05 in the original
  static constexpr unsigned int kTimeoutMs = 100;

  explicit JohnnybAmeeshController(const ControllerOptions& options);

  unsigned int window_size() override;
  void datagram_was_sent(uint64_t, uint64_t, bool) override {}
  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override;
  unsigned int timeout_ms() override { return kTimeoutMs; }
  std::map<std::string, double> parameters() const override;

  double throughput_per_ms() const { return throughput_; }

 private:
  double target_delay_ms_;  // window = throughput x this (kEstimatedRttMs unless given)
  double throughput_ = 0.0;  // datagrams per ms
  uint64_t update_time_ms_ = 0;
  uint64_t last_sequence_number_ = 0;
};

}  // namespace netrepro::grump
