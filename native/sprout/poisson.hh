// Poisson probability mass, as the model's observation likelihood.
#pragma once

namespace netrepro::sprout {

// P(k arrivals | mean). A mean of 0 (the outage bin) gives 1 for k = 0, else 0.
double poisson_pmf(double mean, int k);

}  // namespace netrepro::sprout
