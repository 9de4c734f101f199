#include "ewma_estimator.hh"

#include <cmath>

namespace netrepro::sprout {

void EwmaEstimator::observe_tick(double /*raw*/, int arrivals) {
  // Start-up rule: feed the discrete count (see the header).
  estimate_ = (1 - kAlpha) * estimate_ + kAlpha * arrivals;
}

Counts EwmaEstimator::forecast() {
  Counts out{};
  for (int k = 0; k < kHorizons; ++k) {
    out[k] = static_cast<uint32_t>(std::floor(estimate_ * (k + 1)));
  }
  return out;
}

}  // namespace netrepro::sprout
