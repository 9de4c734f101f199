// What the receiver's tick loop drives: Sprout's Bayesian model or the
// EWMA variant. The tick loop decides which ticks are observed.
#pragma once

#include <string>

#include "forecaster.hh"

namespace netrepro::sprout {

class DeliveryEstimator {
 public:
  virtual ~DeliveryEstimator() = default;
  // Called for every tick that passes.
  virtual void pass_tick() = 0;
  // Called for the ticks that count as observations: `raw` is the
  // fractional packet count, `arrivals` its discrete version.
  virtual void observe_tick(double raw, int arrivals) = 0;
  // The cumulative per-horizon counts to send now.
  virtual Counts forecast() = 0;
  // "sprout" or "sprout-ewma", for stats.
  virtual std::string name() const = 0;
};

}  // namespace netrepro::sprout
