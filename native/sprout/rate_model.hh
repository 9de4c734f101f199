// Sprout's belief about the link's current delivery rate: a probability for
// each of 257 rate bins (bin 0 = outage, bin i >= 1 = rate (i + 1/2) w with
// w = 1000/256 pkt/s), moved by Brownian motion with an outage state and
// updated by Poisson observations of arrivals per tick.
#pragma once

#include <array>

#include "normal_cdf.hh"
#include "sprout_constants.hh"

namespace netrepro::sprout {

class RateModel {
 public:
  using Pmf = std::array<double, kBins>;

  // Starts from the uniform prior (normalised).
  explicit RateModel(NormalCdf::Mode cdf_mode = NormalCdf::Mode::kReferenceTable);

  // Advances the belief by `seconds` of Brownian motion and outage escapes.
  void evolve(double seconds);
  // Multiplies by the likelihood of `arrivals` packets in `seconds` (not normalised).
  void observe(double seconds, int arrivals);
  // Rescales so the probabilities sum to one.
  void normalize();
  // All mass on one bin.
  void set_point_mass(int bin);

  const Pmf& pmf() const { return pmf_; }
  double total() const;

  // Rate (pkt/s) that bin `bin` stands for; 0 for the outage bin.
  static double rate(int bin);
  // The bin holding rate x; out-of-range rates go to the end bins.
  static int bin_of(double x);

 private:
  static double lower_edge(int bin);
  static double upper_edge(int bin);

  Pmf pmf_{};
  NormalCdf cdf_;
};

}  // namespace netrepro::sprout
