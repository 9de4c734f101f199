// Sprout's forecast: for each horizon n = 1..8 ticks and each rate bin b,
// the distribution D[n][b][m] of the cumulative number of packets m delivered
// in the next n ticks if the rate is now in bin b (evolving as the model
// says). Precomputed once; at run time the posterior mixes the rows and the
// forecast is the lower quantile (default 5%) of each horizon's mixture.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "rate_model.hh"
#include "sprout_constants.hh"

namespace netrepro::sprout {

using Counts = std::array<uint32_t, kHorizons>;

class Forecaster {
 public:
  explicit Forecaster(NormalCdf::Mode cdf_mode = NormalCdf::Mode::kReferenceTable);

  // counts[n-1] = smallest m with P(cumulative deliveries in n ticks <= m) >=
  // quantile under the posterior `pmf` (which must be normalised). If even
  // the full modelled range falls short, returns the reference's sentinel
  // (number of modelled counts + 1).
  Counts counts(const RateModel::Pmf& pmf, double quantile) const;

  // D[n][b][m] for tests: probability of m cumulative packets in n ticks from bin b.
  double probability(int horizon, int bin, int m) const;
  // Number of cumulative counts modelled at this horizon (29 n + 1).
  static int count_range(int horizon);

 private:
  // tables_[n-1][m * kBins + b]: stored count-major so a quantile search
  // sums over bins contiguously.
  std::array<std::vector<double>, kHorizons> tables_;
};

}  // namespace netrepro::sprout
