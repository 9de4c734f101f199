#include "rate_model.hh"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "poisson.hh"

namespace netrepro::sprout {

namespace {
// Stands for +-infinity at the end bins (the reference's "BIG").
constexpr double kUnbounded = 1.0e6;
}  // namespace

RateModel::RateModel(NormalCdf::Mode cdf_mode) : cdf_(cdf_mode) {
  pmf_.fill(1.0);
  normalize();
}

double RateModel::rate(int bin) { return bin == 0 ? 0.0 : (bin + 0.5) * kBinWidth; }

double RateModel::lower_edge(int bin) { return bin == 0 ? -kUnbounded : bin * kBinWidth; }

double RateModel::upper_edge(int bin) {
  return bin == kBins - 1 ? kUnbounded : (bin + 1) * kBinWidth;
}

int RateModel::bin_of(double x) {
  const double position = x / kBinWidth;
  if (position < 1.0) {
    return 0;
  }
  if (position >= kBins - 1) {
    return kBins - 1;
  }
  return static_cast<int>(position);
}

void RateModel::evolve(double seconds) {
  const double stddev = kVolatility * std::sqrt(seconds);
  cdf_.set_stddev(stddev);
  const double escape = 1.0 - poisson_pmf(seconds * kOutageEscapeRate, 0);

  Pmf next{};
  for (int from = 0; from < kBins; ++from) {
    const double from_rate = rate(from);
    const double mass = pmf_[from];
    // The reference's range: the bins holding rate -+ 5 sigma, plus one more
    // bin above (its ceiling lookup lands in the next bin). Kept for fidelity;
    // the extra bin carries ~1e-7 of mass and the spec's vectors come out
    // the same without it.
    const int first = bin_of(from_rate - 5 * stddev);
    const int last = std::min(bin_of(from_rate + 5 * stddev) + 1, kBins - 1);
    for (int to = first; to <= last; ++to) {
      double z = 1.0;
      if (from == 0) {
        z = (to != 0) ? escape : 1.0 - escape;
      }
      next[to] += z * mass *
                  (cdf_(upper_edge(to) - from_rate) - cdf_(lower_edge(to) - from_rate));
    }
  }
  pmf_ = next;
}

void RateModel::observe(double seconds, int arrivals) {
  for (int bin = 0; bin < kBins; ++bin) {
    pmf_[bin] *= poisson_pmf(rate(bin) * seconds, arrivals);
  }
}

double RateModel::total() const {
  double sum = 0.0;
  for (double p : pmf_) {
    sum += p;
  }
  return sum;
}

void RateModel::normalize() {
  const double sum = total();
  if (!(sum > 0) || !std::isfinite(sum)) {
    // Only reachable if every bin was ruled out, e.g. an observation above
    // what the top bin can explain after underflow: restart from the prior.
    pmf_.fill(1.0 / kBins);
    return;
  }
  for (double& p : pmf_) {
    p /= sum;
  }
}

void RateModel::set_point_mass(int bin) {
  if (bin < 0 || bin >= kBins) {
    throw std::out_of_range("RateModel::set_point_mass: bin " + std::to_string(bin) +
                            " outside 0.." + std::to_string(kBins - 1));
  }
  pmf_.fill(0.0);
  pmf_[bin] = 1.0;
}

}  // namespace netrepro::sprout
