// Sprout-EWMA (tag ewma-evaluated): e = 7/8 e + 1/8 x on every observed
// tick, counts[k] = floor(e (k + 1)).
//
// Start-up rule (ours): x is the tick's discrete count, the same k that
// Sprout observes (round(c), and 1 whenever 0 < c < 1), not the raw
// fractional count c of the reference. A tick in which only a heartbeat
// arrived therefore feeds 1, not ~0. From a cold start (and after an outage)
// only heartbeats arrive, one per 50 ms; with the raw count e would stay near
// 0, every floor(e (k + 1)) would be 0, the sender's window would stay 0 and
// data would never start. With k, two heartbeat ticks lift e to 15/64 >= 1/6,
// so counts[5] - counts[0] >= 1 and the sender opens a window of one packet;
// once data flows, k and c differ only by rounding.
#pragma once

#include "delivery_estimator.hh"

namespace netrepro::sprout {

class EwmaEstimator : public DeliveryEstimator {
 public:
  EwmaEstimator() = default;

  void pass_tick() override {}
  void observe_tick(double raw, int arrivals) override;
  Counts forecast() override;
  std::string name() const override { return "sprout-ewma"; }

  double estimate() const { return estimate_; }  // packets per tick

 private:
  static constexpr double kAlpha = 1.0 / 8.0;
  double estimate_ = 0.0;
};

}  // namespace netrepro::sprout
