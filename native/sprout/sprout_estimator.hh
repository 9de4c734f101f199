// Sprout proper: evolve the rate belief every tick, observe the arrivals of
// observed ticks, forecast the lower quantile of cumulative deliveries.
#pragma once

#include "delivery_estimator.hh"
#include "forecaster.hh"
#include "rate_model.hh"

namespace netrepro::sprout {

class SproutEstimator : public DeliveryEstimator {
 public:
  // `forecaster` is shared (it is expensive to build) and must outlive this.
  SproutEstimator(const Forecaster& forecaster, double quantile);

  void pass_tick() override;
  void observe_tick(double raw, int arrivals) override;
  Counts forecast() override;
  std::string name() const override { return "sprout"; }

  const RateModel& model() const { return model_; }

 private:
  const Forecaster& forecaster_;
  double quantile_;
  RateModel model_;
};

}  // namespace netrepro::sprout
