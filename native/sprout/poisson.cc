#include "poisson.hh"

#include <cmath>
#include <stdexcept>
#include <string>

namespace netrepro::sprout {

double poisson_pmf(double mean, int k) {
  if (k < 0 || mean < 0) {
    throw std::invalid_argument("poisson_pmf: need mean >= 0 and k >= 0, got mean=" +
                                std::to_string(mean) + " k=" + std::to_string(k));
  }
  if (mean == 0) {
    return k == 0 ? 1.0 : 0.0;
  }
  // A running product keeps the error at about k ulps; means here are <= 21
  // and k < 30, so exp(-mean) never underflows.
  double p = std::exp(-mean);
  for (int i = 1; i <= k; ++i) {
    p *= mean / i;
  }
  return p;
}

}  // namespace netrepro::sprout
