// The zero-mean normal CDF used by the Brownian-motion step.
//
// The reference does not evaluate the CDF at x: it reads a table of 32769
// cells over [-1000, 1000] (width 2000/32768), each holding the CDF at the
// cell's midpoint (the first cell at -1000), and x picks its cell by
// truncation. Bin edges minus bin midpoints are multiples of half a bin
// width (1.953125 = 32 cells), so every lookup lands exactly on a cell's
// lower edge and the table returns CDF(x + half a cell). Mode::kReferenceTable
// reproduces that; Mode::kExact evaluates erfc directly. sprout_test shows
// which of the two reproduces the spec's forecast vectors.
#pragma once

#include <vector>

namespace netrepro::sprout {

class NormalCdf {
 public:
  enum class Mode { kReferenceTable, kExact };

  explicit NormalCdf(Mode mode = Mode::kReferenceTable);

  // Selects the standard deviation; recomputes the table only when it changes.
  void set_stddev(double stddev);
  double operator()(double x) const;
  Mode mode() const { return mode_; }

 private:
  static constexpr int kCells = 32768;  // plus one: the reference stores 32769
  static constexpr double kHalfRange = 1000.0;

  double exact(double x) const;

  Mode mode_;
  double stddev_ = -1.0;
  std::vector<double> table_;
};

}  // namespace netrepro::sprout
