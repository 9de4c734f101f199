#include "sprout_estimator.hh"

#include <stdexcept>
#include <string>

namespace netrepro::sprout {

SproutEstimator::SproutEstimator(const Forecaster& forecaster, double quantile)
    : forecaster_(forecaster), quantile_(quantile) {
  if (!(quantile > 0.0 && quantile < 1.0)) {
    throw std::invalid_argument("SproutEstimator: confidence must be in (0, 1), got " +
                                std::to_string(quantile));
  }
}

void SproutEstimator::pass_tick() { model_.evolve(kTickSeconds); }

void SproutEstimator::observe_tick(double /*raw*/, int arrivals) {
  model_.observe(kTickSeconds, arrivals);
  // The reference normalises only when it forecasts; doing it every observed
  // tick is the same arithmetic up to rounding and keeps long stretches of
  // unlikely observations from underflowing.
  model_.normalize();
}

Counts SproutEstimator::forecast() {
  model_.normalize();
  return forecaster_.counts(model_.pmf(), quantile_);
}

}  // namespace netrepro::sprout
