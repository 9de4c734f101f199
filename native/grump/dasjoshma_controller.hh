// The 2013 MIT 6.829 contest entry of das & joshma, written from the description
// in the spec (sprout-and-contest.md section 6; source read for facts:
// keithw/datagrump-students branch das-joshma 7d955f0, controller.cc).
//
// Every 30 ms tick (checked on every send and every ACK) it updates a delivery
// rate estimate in datagrams per ms:
//   recent = max(acks in the tick / 30, 1/d)      d = delay sample, 0 on sends
//   thr    = max(0.8 thr + 0.2 recent, 1/d)       (1/d taken as 0 when d = 0)
// and counts consecutive ticks with recent above (hi) or not above (lo) thr.
//   window = floor(thr * (1 + 0.01 (hi - lo)) * 70)   (70 ms of queue), >= 0
// d is the one-way delay recv - send when positive, capped by the RTT.
// Ticks are aligned to multiples of 30 ms of the clock. The original clock was
// ms since 1362700000000 (6.829's epoch); ours is the Unix epoch, which only
// shifts the tick phase by 10 ms.
#pragma once

#include "controller.hh"
#include "controller_options.hh"

namespace netrepro::grump {

class DasJoshmaController : public Controller {
 public:
  static constexpr uint64_t kTickMs = 30;
  static constexpr double kEwmaGain = 0.2;
  static constexpr double kSafeDelayMs = 70;
  static constexpr double kScaleStep = 0.01;  // written 0.05 / 5 in the original
  static constexpr unsigned int kTimeoutMs = 100;

  explicit DasJoshmaController(const ControllerOptions& options);

  unsigned int window_size() override;
  void datagram_was_sent(uint64_t sequence_number, uint64_t send_timestamp,
                         bool after_timeout) override;
  void ack_received(uint64_t sequence_number_acked, uint64_t send_timestamp_acked,
                    uint64_t recv_timestamp_acked, uint64_t timestamp_ack_received) override;
  unsigned int timeout_ms() override { return kTimeoutMs; }
  std::map<std::string, double> parameters() const override;

  double throughput_per_ms() const { return throughput_; }

 private:
  void update_estimate(uint64_t now_ms, uint64_t delay_ms);

  double target_delay_ms_;  // kSafeDelayMs unless given
  uint64_t acks_this_tick_ = 0;
  uint64_t last_tick_ms_ = 0;
  double throughput_ = 0.0;  // datagrams per ms
  int ticks_higher_ = 0;
  int ticks_lower_ = 0;
};

}  // namespace netrepro::grump
