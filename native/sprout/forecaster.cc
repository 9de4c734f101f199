#include "forecaster.hh"

#include <stdexcept>
#include <string>

#include "poisson.hh"

namespace netrepro::sprout {

int Forecaster::count_range(int horizon) { return (kMaxArrivalsPerTick - 1) * horizon + 1; }

Forecaster::Forecaster(NormalCdf::Mode cdf_mode) {
  // Per-bin likelihood of m arrivals in one tick, m = 0..29.
  std::vector<std::array<double, kMaxArrivalsPerTick>> tick_counts(kBins);
  for (int b = 0; b < kBins; ++b) {
    for (int m = 0; m < kMaxArrivalsPerTick; ++m) {
      tick_counts[b][m] = poisson_pmf(RateModel::rate(b) * kTickSeconds, m);
    }
  }
  for (int n = 1; n <= kHorizons; ++n) {
    tables_[n - 1].assign(static_cast<size_t>(count_range(n)) * kBins, 0.0);
  }

  RateModel component(cdf_mode);
  for (int b = 0; b < kBins; ++b) {
    component.set_point_mass(b);
    std::vector<double> cumulative{1.0};
    for (int n = 1; n <= kHorizons; ++n) {
      // The point mass is already normalised; after an evolve it is not.
      if (n > 1) {
        component.normalize();
      }
      // This tick's arrivals, mixed over where the rate may have wandered.
      std::array<double, kMaxArrivalsPerTick> tick{};
      for (int m = 0; m < kMaxArrivalsPerTick; ++m) {
        double p = 0.0;
        for (int r = 0; r < kBins; ++r) {
          p += component.pmf()[r] * tick_counts[r][m];
        }
        tick[m] = p > 1.0 ? 1.0 : p;
      }
      // Convolve into the cumulative count; the tail (>= 30 in a tick) is dropped.
      std::vector<double> next(cumulative.size() + kMaxArrivalsPerTick - 1, 0.0);
      for (size_t old_count = 0; old_count < cumulative.size(); ++old_count) {
        for (int m = 0; m < kMaxArrivalsPerTick; ++m) {
          next[old_count + m] += cumulative[old_count] * tick[m];
        }
      }
      cumulative.swap(next);
      std::vector<double>& table = tables_[n - 1];
      for (size_t m = 0; m < cumulative.size(); ++m) {
        table[m * kBins + b] = cumulative[m];
      }
      if (n < kHorizons) {
        component.evolve(kTickSeconds);
      }
    }
  }
}

double Forecaster::probability(int horizon, int bin, int m) const {
  if (horizon < 1 || horizon > kHorizons || bin < 0 || bin >= kBins || m < 0 ||
      m >= count_range(horizon)) {
    throw std::out_of_range("Forecaster::probability(" + std::to_string(horizon) + ", " +
                            std::to_string(bin) + ", " + std::to_string(m) + ") out of range");
  }
  return tables_[horizon - 1][static_cast<size_t>(m) * kBins + bin];
}

Counts Forecaster::counts(const RateModel::Pmf& pmf, double quantile) const {
  if (!(quantile > 0.0 && quantile < 1.0)) {
    throw std::invalid_argument("Forecaster::counts: quantile must be in (0, 1), got " +
                                std::to_string(quantile));
  }
  Counts out{};
  for (int n = 1; n <= kHorizons; ++n) {
    const std::vector<double>& table = tables_[n - 1];
    const int range = count_range(n);
    uint32_t answer = static_cast<uint32_t>(range + 1);  // the reference's "not reached"
    double sum = 0.0;
    for (int m = 0; m < range; ++m) {
      const double* row = &table[static_cast<size_t>(m) * kBins];
      double p = 0.0;
      for (int b = 0; b < kBins; ++b) {
        p += pmf[b] * row[b];
      }
      sum += p > 1.0 ? 1.0 : p;
      if (sum >= quantile) {
        answer = static_cast<uint32_t>(m);
        break;
      }
    }
    out[n - 1] = answer;
  }
  return out;
}

}  // namespace netrepro::sprout
